#include "common/session/config.hpp"

#include <charconv>
#include <string_view>
#include <vector>
#include <limits>

#include "common/timeline/name_filter.hpp"
#include "common/support/did_you_mean.hpp"
#include "common/support/text_safe.hpp"

#include "common/session/output_name.hpp"

namespace kob {

namespace {

using Setter = bool (*)(Config&, std::string_view value, std::string& accepted);

struct OptionSpec {
  std::string_view name;
  std::string_view value_name;  // empty for a flag
  std::string_view default_text;
  std::string_view help;
  Setter set;
};

struct Named {
  std::string_view name;
  std::uint32_t bits;
};

constexpr Named kGroups[] = {
    {"kokkos", kGroupKokkos},       {"omp-parallel", kGroupOmpParallel}, {"omp-work", kGroupOmpWork},
    {"omp-sync", kGroupOmpSync},    {"omp-task", kGroupOmpTask},         {"omp-mutex", kGroupOmpMutex},
    {"omp-target", kGroupOmpTarget}, {"omp-device", kGroupOmpDevice},    {"omp", kGroupAllOmp},
    {"all", kGroupAll},             {"none", 0},
};

constexpr Named kFormats[] = {
    {"chrome", kFormatChrome}, {"summary", kFormatSummary}, {"json", kFormatJson}, {"perfetto", kFormatPerfetto},
    {"otf2", kFormatOtf2}, {"html", kFormatHtml}, {"sqlite", kFormatSqlite}, {"all", kFormatAll}, {"none", 0},
};

// A comma-separated list of names. The known ones apply even when some are not (each of those is
// named, with the nearest known name, in `accepted`); false when none is known.
std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ",") + std::string(n);
  return out;
}

template <std::size_t N>
bool parse_list(std::string_view value, const Named (&table)[N], std::uint32_t& out, std::string& accepted) {
  std::uint32_t mask = 0;
  std::vector<std::string_view> names, bad;
  for (const auto& n : table) names.push_back(n.name);
  bool any = false;
  while (true) {
    const auto comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    bool found = false;
    for (const auto& n : table) {
      if (n.name == item) {
        mask |= n.bits;
        found = true;
      }
    }
    any = any || found;
    if (!found) bad.push_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  accepted.clear();
  for (std::string_view item : bad)
    accepted += (accepted.empty() ? "'" : "; '") + std::string(item) + "' is not one of " + join(names) + text::did_you_mean(item, names);
  if (!any) return false;
  out = mask;
  return true;
}

bool parse_bool(std::string_view v, bool& out, std::string& accepted) {
  if (v.empty() || v == "true" || v == "1" || v == "yes" || v == "on") return out = true, true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return out = false, true;
  accepted = "expected true or false";
  return false;
}

bool valid_regex(std::string_view v, std::string& accepted) {
  const std::string error = NameFilter::check(v);
  if (error.empty()) return true;
  accepted = "not a valid RE2 regular expression (" + error + ")";
  return false;
}

// The cap is kept in bytes: a number of MiB whose byte count does not fit in 64 bits would wrap.
constexpr std::uint64_t kMaxMemoryLimitMib = std::numeric_limits<std::uint64_t>::max() >> 20;

constexpr OptionSpec kOptions[] = {
    {"output", "PREFIX", "kob-<executable>-<pid>[-r<rank>]",
     "prefix of the files written; placeholders %p (pid), %r (rank), %h (host), %q{VAR} (environment variable), "
     "%% (a %); DIR/ means the default names in DIR",
     [](Config& c, std::string_view v, std::string& a) {
       if (v.empty()) return a = "expected a non-empty prefix", false;
       if (!output_name::check(v, a)) return false;
       c.output = std::string(v);
       return true;
     }},
    {"format", "LIST", "perfetto,summary,json", "files to write: perfetto (PREFIX.pftrace), chrome (PREFIX.trace.json), summary (PREFIX.summary.txt), json (PREFIX.summary.json), otf2 (PREFIX.otf2/, an OTF2 archive: open PREFIX.otf2/traces.otf2), html (PREFIX.html, a report that opens in any browser), sqlite (PREFIX.sqlite, a SQL database of every span)",
     [](Config& c, std::string_view v, std::string& a) { return parse_list(v, kFormats, c.formats, a); }},
    {"events", "LIST", "all",
     "event groups to record: kokkos, omp-parallel, omp-work, omp-sync, omp-task, omp-mutex, omp-target, omp-device (also omp, all, none)",
     [](Config& c, std::string_view v, std::string& a) { return parse_list(v, kGroups, c.events, a); }},
    {"include", "REGEX", "(none)", "keep only Kokkos kernels and regions whose name matches (RE2 syntax, anywhere in the name)",
     [](Config& c, std::string_view v, std::string& a) {
       if (!valid_regex(v, a)) return false;
       c.include = std::string(v);
       return true;
     }},
    {"exclude", "REGEX", "(none)", "drop Kokkos kernels and regions whose name matches",
     [](Config& c, std::string_view v, std::string& a) {
       if (!valid_regex(v, a)) return false;
       c.exclude = std::string(v);
       return true;
     }},
    {"quiet", "", "false", "do not print the summary on stderr",
     [](Config& c, std::string_view v, std::string& a) { return parse_bool(v, c.quiet, a); }},
    {"log-level", "LEVEL", "warn", "tool messages: trace, debug, info, warn, error, off",
     [](Config& c, std::string_view v, std::string& a) {
       if (log::parse_level(v, c.log_level)) return true;
       a = "expected one of trace,debug,info,warn,error,off";
       return false;
     }},
    {"memory-limit", "MIB", "64", "memory cap in MiB for the ring slots of all threads together (1 to 17592186044415); a thread that finds no room records nothing, its events counted as dropped",
     [](Config& c, std::string_view v, std::string& a) {
       std::uint64_t n = 0;
       auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
       if (ec != std::errc() || p != v.data() + v.size() || n == 0 || n > kMaxMemoryLimitMib)
         return a = "expected a number of MiB from 1 to " + std::to_string(kMaxMemoryLimitMib), false;
       c.memory_limit_mib = n;
       return true;
     }},
    {"max-trace-size", "MIB", "0", "cap in MiB on the raw trace PREFIX.kob (0: none); past it whole chunks of events are dropped, counted, and their time spans named",
     [](Config& c, std::string_view v, std::string& a) {
       std::uint64_t n = 0;
       auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
       if (ec != std::errc() || p != v.data() + v.size() || n > kMaxMemoryLimitMib)
         return a = "expected a number of MiB from 0 to " + std::to_string(kMaxMemoryLimitMib), false;
       c.max_trace_size_mib = n;
       return true;
     }},
    {"jobs", "N", "0",
     "threads making the trace events of the files at the end besides the one reading the records, N - 1 more decoding them ahead of it (1 to 16; 0: the cores the process may use, shared among the MPI ranks of the node, less one)",
     [](Config& c, std::string_view v, std::string& a) {
       unsigned n = 0;
       auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
       if (ec != std::errc() || p != v.data() + v.size() || n > 16) return a = "expected a number of threads from 0 to 16", false;
       c.jobs = n;
       return true;
     }},
    {"exact-kernel-end", "", "false",
     "ask Kokkos to fence around every kernel so that end times of asynchronous kernels are exact (costs time)",
     [](Config& c, std::string_view v, std::string& a) { return parse_bool(v, c.exact_kernel_end, a); }},
    {"device-trace-region", "NAME", "(none)",
     "pause device tracing (OpenMP device tracing interface) except while a Kokkos profile region named NAME is open",
     [](Config& c, std::string_view v, std::string& a) {
       if (v.empty()) return a = "expected the name of a Kokkos profile region", false;
       c.device_trace_region = std::string(v);
       return true;
     }},
    {"chain", "LIB", "(none)",
     "a tool library to run beside this one: every Kokkos hook (if it has kokkosp_* hooks) and every OpenMP callback (if it "
     "has ompt_start_tool) is passed on to it (also: the entry after this library's in KOKKOS_TOOLS_LIBS or "
     "KOKKOS_PROFILE_LIBRARY, ';'-separated; for OpenMP, KOB_TOOL_LIBRARIES or the entries after it in OMP_TOOL_LIBRARIES)",
     [](Config& c, std::string_view v, std::string& a) {
       if (v.empty()) return a = "expected the path of a tool library", false;
       c.chain = std::string(v);
       return true;
     }},
    {"chain-arg", "WORD", "(none)",
     "one argument for the chained tool's kokkosp_parse_args, after the program name (give it once per word)",
     [](Config& c, std::string_view v, std::string&) {
       c.chain_args.emplace_back(v);
       return true;
     }},
    {"help", "", "false", "print this help",
     [](Config& c, std::string_view v, std::string& a) { return parse_bool(v, c.help, a); }},
};

// Widest echo of a user's argument in a warning line.
constexpr std::size_t kShownColumns = 80;

}  // namespace

void Config::apply(const std::vector<std::string>& args, std::vector<std::string>& errors) {
  for (const std::string& arg : args) {
    std::string_view s(arg);
    if (s.substr(0, 2) != "--") {
      errors.push_back("ignoring argument '" + text::shorten(arg, kShownColumns) + "': options look like --name=value (see --help)");
      continue;
    }
    s.remove_prefix(2);
    const auto eq = s.find('=');
    const std::string_view key = s.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : s.substr(eq + 1);
    const OptionSpec* spec = nullptr;
    for (const auto& o : kOptions) {
      if (o.name == key) spec = &o;
    }
    if (spec == nullptr) {
      std::string known;
      std::vector<std::string_view> names;
      for (const auto& o : kOptions) {
        known += (known.empty() ? "--" : ", --") + std::string(o.name);
        names.push_back(o.name);
      }
      const std::string near = text::nearest(key, names);
      errors.push_back("ignoring unknown option '--" + text::shorten(key, kShownColumns) + "'" +
                       (near.empty() ? " (accepted: " + known + ")" : ": did you mean '--" + near + "'? (--help lists them all)"));
      continue;
    }
    if (!spec->value_name.empty() && eq == std::string_view::npos) {
      errors.push_back("ignoring option '--" + std::string(key) + "': it needs a value, --" + std::string(key) + "=" +
                       std::string(spec->value_name));
      continue;
    }
    std::string accepted;
    Config trial = *this;
    if (spec->set(trial, value, accepted)) {
      *this = std::move(trial);
      // A list with some names unknown: the known ones apply, the others are named.
      if (!accepted.empty())
        errors.push_back("option '--" + std::string(key) + "=" + text::shorten(value, kShownColumns) + "': " +
                         text::shorten(accepted, 2 * kShownColumns) + "; the others apply");
    } else {
      errors.push_back("ignoring option '--" + std::string(key) + "=" + text::shorten(value, kShownColumns) + "': " +
                       text::shorten(accepted, 2 * kShownColumns));
    }
  }
}

std::vector<std::string> split_args(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n') ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string help_text() {
  std::string out =
      "kokkos-ompt-bridge options (in --kokkos-tools-args=\"...\", KOKKOS_TOOLS_ARGS or KOB_ARGS;\n"
      "the command line wins over the environment):\n";
  for (const auto& o : kOptions) {
    std::string left = "  --" + std::string(o.name);
    if (!o.value_name.empty()) left += "=" + std::string(o.value_name);
    if (left.size() < 26) left.resize(26, ' ');
    out += left + " " + std::string(o.help) + " (default: " + std::string(o.default_text) + ")\n";
  }
  return out;
}

std::string format_names(std::uint32_t mask) {
  std::string out;
  for (const auto& f : kFormats) {
    if (f.bits != 0 && (f.bits & (f.bits - 1)) == 0 && (mask & f.bits)) out += (out.empty() ? "" : ",") + std::string(f.name);
  }
  return out.empty() ? "none" : out;
}

std::string group_names(std::uint32_t mask) {
  std::string out;
  for (const auto& g : kGroups) {
    if (g.bits != 0 && (g.bits & (g.bits - 1)) == 0 && (mask & g.bits)) out += (out.empty() ? "" : ",") + std::string(g.name);
  }
  return out;
}

}  // namespace kob
