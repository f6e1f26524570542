#include "common/session/output_name.hpp"

#include <cstdlib>

#include "common/support/text_safe.hpp"

namespace kob::output_name {

namespace {

constexpr const char* kAccepted = "accepted: %p (pid), %r (rank), %h (host), %q{VAR} (environment variable), %% (a %)";

// Walks the pattern: literal text to on_text, each placeholder to on_field(letter, variable name).
// Returns false at the first bad placeholder, with error set.
template <class OnText, class OnField>
bool walk(std::string_view p, OnText on_text, OnField on_field, std::string* error) {
  std::size_t i = 0;
  while (i < p.size()) {
    const std::size_t pct = p.find('%', i);
    if (pct == std::string_view::npos) {
      on_text(p.substr(i));
      break;
    }
    on_text(p.substr(i, pct - i));
    if (pct + 1 >= p.size()) {
      if (error) *error = "a lone '%' at its end (" + std::string(kAccepted) + ")";
      return false;
    }
    const char c = p[pct + 1];
    if (c == '%') {
      on_text("%");
      i = pct + 2;
    } else if (c == 'p' || c == 'r' || c == 'h') {
      on_field(c, std::string_view());
      i = pct + 2;
    } else if (c == 'q') {
      const std::size_t close = p.find('}', pct + 2);
      if (pct + 2 >= p.size() || p[pct + 2] != '{' || close == std::string_view::npos || close == pct + 3) {
        if (error) *error = "'%q' needs a variable name in braces, %q{VAR} (" + std::string(kAccepted) + ")";
        return false;
      }
      on_field('q', p.substr(pct + 3, close - pct - 3));
      i = close + 1;
    } else {
      if (error) *error = "unknown placeholder '%" + text::escape(std::string_view(&c, 1)) + "' (" + std::string(kAccepted) + ")";
      return false;
    }
  }
  return true;
}

bool uses(std::string_view pattern, char field) {
  bool found = false;
  walk(pattern, [](std::string_view) {}, [&](char c, std::string_view) { found = found || c == field; }, nullptr);
  return found;
}

bool tells_ranks_apart(std::string_view pattern) {
  bool found = false;
  walk(
      pattern, [](std::string_view) {},
      [&](char c, std::string_view var) {
        if (c == 'r' || c == 'p') found = true;
        for (const char* v : kRankVariables)
          if (c == 'q' && var == v) found = true;
      },
      nullptr);
  return found;
}

}  // namespace

int rank_from_environment(const char* (*getenv)(const char*)) {
  for (const char* var : kRankVariables) {
    if (const char* v = getenv(var)) {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (end != v && *end == 0 && r >= 0 && r <= 0x7fffffff) return static_cast<int>(r);
    }
  }
  return -1;
}

bool check(std::string_view pattern, std::string& error) {
  return walk(pattern, [](std::string_view) {}, [](char, std::string_view) {}, &error);
}

std::string expand(std::string_view pattern, const Context& ctx) {
  std::string out;
  auto get = ctx.getenv ? ctx.getenv : +[](const char* n) -> const char* { return std::getenv(n); };
  const bool ok = walk(
      pattern, [&](std::string_view t) { out += t; },
      [&](char c, std::string_view var) {
        if (c == 'p') out += std::to_string(ctx.pid);
        if (c == 'r') out += std::to_string(ctx.rank >= 0 ? ctx.rank : 0);
        if (c == 'h') out += ctx.host;
        if (c == 'q') {
          if (const char* v = get(std::string(var).c_str())) out += v;
        }
      },
      nullptr);
  return ok ? out : std::string(pattern);
}

std::string default_prefix(const Context& ctx) {
  std::string p = "kob-" + ctx.exe + "-" + std::to_string(ctx.pid);
  if (ctx.rank >= 0) p += "-r" + std::to_string(ctx.rank);
  return p;
}

Resolved resolve(std::string_view pattern, const Context& ctx) {
  Resolved r;
  std::string dummy;
  if (pattern.empty() || !check(pattern, dummy)) {
    r.prefix = default_prefix(ctx);
    return r;
  }
  std::string p = expand(pattern, ctx);
  if (p.empty()) {  // only unset variables: no name at all
    r.prefix = default_prefix(ctx);
    return r;
  }
  if (p.back() == '/') {
    // The default names already hold the pid and the rank.
    r.directory = p;
    r.prefix = p + default_prefix(ctx);
    return r;
  }
  std::string added;
  if (ctx.rank >= 0 && !tells_ranks_apart(pattern)) added += "-r" + std::to_string(ctx.rank);
  if (ctx.forked_child && !uses(pattern, 'p')) added += "-" + std::to_string(ctx.pid);
  if (!added.empty()) {
    std::string who;
    if (ctx.rank >= 0 && added[1] == 'r') who = "MPI rank " + std::to_string(ctx.rank);
    if (ctx.forked_child) who += (who.empty() ? "" : ", ") + std::string("forked child pid ") + std::to_string(ctx.pid);
    // The pattern and what it expanded to are the user's bytes (and the environment's): escaped, so
    // that the note stays one line that cannot drive the terminal.
    r.note = "--output=" + text::escape(pattern) + " has no placeholder that tells this process (" + who +
             ") from the others: writing " + text::escape(p + added) + ".* instead, so that no process overwrites another's files";
  }
  r.prefix = p + added;
  // PREFIX's folder is made as DIR/'s is: a run is not lost to a folder not made yet.
  const std::size_t slash = r.prefix.rfind('/');
  if (slash != std::string::npos && slash > 0) r.directory = r.prefix.substr(0, slash + 1);
  return r;
}

}  // namespace kob::output_name
