// Fuzz target: the option parser. The input is a KOB_ARGS / --kokkos-tools-args string, split
// as the library splits it and applied over the defaults. Every problem must come back as one
// terminal-safe line, and the options that matter to a conversion must survive the trip through
// a raw trace's facts (add_config_facts, config_from_facts) as `kob convert` makes it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "common/session/config.hpp"
#include "common/session/run_outputs.hpp"
#include "common/support/text_safe.hpp"
#include "fuzz_checks.hpp"

namespace {

using kob_fuzz::one_safe_line;
using kob_fuzz::require;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> args = kob::split_args(text);
  for (const std::string& a : args) require(!a.empty() && a.find_first_of(" \t\n") == std::string::npos);

  kob::Config c;
  std::vector<std::string> errors;
  c.apply(args, errors);
  require(errors.size() <= args.size());
  for (const std::string& e : errors) require(!e.empty() && one_safe_line(e));

  // Applying the same arguments again changes nothing: each option is a plain assignment.
  kob::Config again = c;
  std::vector<std::string> errors_again;
  again.apply(args, errors_again);
  require(errors_again.size() == errors.size());
  require(again.formats == c.formats && again.events == c.events && again.output == c.output &&
          again.include == c.include && again.exclude == c.exclude && again.memory_limit_mib == c.memory_limit_mib);

  // What a raw trace records of the configuration gives the same configuration back.
  kob::Facts facts;
  kob::add_config_facts(c, facts);
  const kob::Config back = kob::config_from_facts(facts);
  require(back.formats == c.formats);
  require(back.events == c.events);
  require(back.include == c.include && back.exclude == c.exclude);
  require(back.memory_limit_mib == c.memory_limit_mib);

  // The arguments as the library records them (one per line) under the facts above.
  std::string given;
  for (const std::string& a : args) given += a + "\n";
  facts.insert(facts.begin(), {std::string(kob::fact::kSection), std::string(kob::fact::kArgs), given});
  const kob::Config recorded = kob::config_from_facts(facts);
  require(recorded.formats == c.formats && recorded.events == c.events && recorded.memory_limit_mib == c.memory_limit_mib);

  require(!kob::format_names(c.formats).empty());
  (void)kob::group_names(c.events);
  return 0;
}
