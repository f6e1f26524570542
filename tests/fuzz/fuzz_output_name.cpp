// Fuzz target: the --output pattern (placeholders %p %r %h %q{VAR} %%), checked, expanded and
// resolved to the files' prefix. The input is NUL-separated: the pattern, the host name, the value
// every environment variable holds (those whose name starts with 'U' are unset), and a flags byte
// (bit 0: a forked child). The pattern is cut at its first NUL, as it would be when it comes from
// the environment or the command line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "common/session/output_name.hpp"
#include "common/support/text_safe.hpp"
#include "fuzz_checks.hpp"

namespace {

using kob_fuzz::one_safe_line;
using kob_fuzz::require;

std::string env_value;  // what every set variable holds in this run

const char* fake_getenv(const char* name) { return name[0] == 'U' ? nullptr : env_value.c_str(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && parts.size() < 4) {
      parts.emplace_back();
    } else {
      parts.back() += static_cast<char>(data[i]);
    }
  }
  parts.resize(4);
  std::string pattern = parts[0];
  env_value = parts[2];
  env_value = env_value.substr(0, env_value.find('\0'));

  namespace on = kob::output_name;
  on::Context ctx;
  ctx.pid = 4242;
  ctx.getenv = fake_getenv;
  ctx.rank = on::rank_from_environment(fake_getenv);
  ctx.host = parts[1];
  ctx.exe = "prog";
  ctx.forked_child = !parts[3].empty() && (parts[3][0] & 1);

  std::string error;
  const bool ok = on::check(pattern, error);
  if (!ok) require(!error.empty() && error.find('\n') == std::string::npos);
  const std::string expanded = on::expand(pattern, ctx);
  if (!ok) require(expanded == pattern);
  if (pattern.find('%') == std::string::npos) require(expanded == pattern);

  const on::Resolved r = on::resolve(pattern, ctx);
  require(!r.prefix.empty());
  if (!r.directory.empty()) require(r.prefix.compare(0, r.directory.size(), r.directory) == 0);
  // The note is one line for the user's terminal, whatever the pattern and the variables hold.
  if (!r.note.empty()) require(one_safe_line(r.note));
  if (!ok || pattern.empty()) require(r.prefix == on::default_prefix(ctx) && r.directory.empty() && r.note.empty());
  return 0;
}
