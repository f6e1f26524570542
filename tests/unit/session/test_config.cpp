// Option parsing, split_args, help text.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/session/config.hpp"

using kob::Config;
using Args = std::vector<std::string>;

namespace {

struct Applied {
  Config c;
  std::vector<std::string> errors;
};

Applied apply(const Args& args) {
  Applied r;
  r.c.apply(args, r.errors);
  return r;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Exactly one error, naming the argument, and the config left at its defaults.
void check_rejected(const std::string& arg, const std::string& mention) {
  CAPTURE(arg);
  const Applied r = apply({arg});
  REQUIRE(r.errors.size() == 1);
  CAPTURE(r.errors[0]);
  CHECK(contains(r.errors[0], mention));
  CHECK(r.errors[0].find('\n') == std::string::npos);
  const Config d;
  CHECK(r.c.output == d.output);
  CHECK(r.c.formats == d.formats);
  CHECK(r.c.events == d.events);
  CHECK(r.c.include == d.include);
  CHECK(r.c.exclude == d.exclude);
  CHECK(r.c.quiet == d.quiet);
  CHECK(r.c.log_level == d.log_level);
  CHECK(r.c.help == d.help);
  CHECK(r.c.exact_kernel_end == d.exact_kernel_end);
  CHECK(r.c.memory_limit_mib == d.memory_limit_mib);
  CHECK(r.c.device_trace_region == d.device_trace_region);
}

}  // namespace

TEST_CASE("config: defaults") {
  const Config c;
  CHECK(c.output.empty());
  CHECK(c.formats == (kob::kFormatPerfetto | kob::kFormatSummary | kob::kFormatJson));
  CHECK(c.events == kob::kGroupAll);
  CHECK(c.include.empty());
  CHECK(c.exclude.empty());
  CHECK_FALSE(c.quiet);
  CHECK(c.log_level == kob::log::Level::Warn);
  CHECK_FALSE(c.help);
  CHECK_FALSE(c.exact_kernel_end);
  CHECK(c.memory_limit_mib == 64);
  CHECK(c.max_trace_size_mib == 0);
  CHECK(c.jobs == 0);
  CHECK(c.device_trace_region.empty());
}

TEST_CASE("config: every option of the table applies") {
  const Applied r = apply({"--output=run1", "--format=chrome", "--events=kokkos,omp-task", "--include=^foo",
                           "--exclude=bar$", "--quiet", "--log-level=debug", "--memory-limit=48", "--max-trace-size=7", "--jobs=3",
                           "--exact-kernel-end", "--device-trace-region=solve", "--help"});
  CHECK(r.errors.empty());
  CHECK(r.c.output == "run1");
  CHECK(r.c.formats == kob::kFormatChrome);
  CHECK(r.c.events == (kob::kGroupKokkos | kob::kGroupOmpTask));
  CHECK(r.c.include == "^foo");
  CHECK(r.c.exclude == "bar$");
  CHECK(r.c.quiet);
  CHECK(r.c.log_level == kob::log::Level::Debug);
  CHECK(r.c.memory_limit_mib == 48);
  CHECK(r.c.max_trace_size_mib == 7);
  CHECK(r.c.jobs == 3);
  CHECK(r.c.exact_kernel_end);
  CHECK(r.c.device_trace_region == "solve");
  CHECK(r.c.help);
}

TEST_CASE("config: lists") {
  CHECK(apply({"--format=summary,json"}).c.formats == (kob::kFormatSummary | kob::kFormatJson));
  CHECK(apply({"--format=none"}).c.formats == 0);
  CHECK(apply({"--format=perfetto,chrome"}).c.formats == (kob::kFormatPerfetto | kob::kFormatChrome));
  CHECK((kob::kFormatAll & kob::kFormatPerfetto) != 0);
  CHECK(apply({"--format=chrome", "--format=all"}).c.formats == kob::kFormatAll);  // the last one wins
  CHECK(apply({"--events=omp"}).c.events == kob::kGroupAllOmp);
  CHECK(apply({"--events=none"}).c.events == 0);
  CHECK(apply({"--events=none", "--events=all"}).c.events == kob::kGroupAll);
  CHECK(apply({"--events=omp-parallel,omp-work,omp-sync,omp-mutex,omp-target,omp-device"}).c.events ==
        (kob::kGroupAllOmp & ~kob::kGroupOmpTask));
  // A bad item is named, with the nearest good one; the good items apply.
  const Applied bad = apply({"--events=kokkos,omp-tasks"});
  REQUIRE(bad.errors.size() == 1);
  CHECK(contains(bad.errors[0], "'omp-tasks'"));
  CHECK(contains(bad.errors[0], "did you mean 'omp-task'?"));
  CHECK(contains(bad.errors[0], "the others apply"));
  CHECK(bad.c.events == kob::kGroupKokkos);
  const Applied trailing = apply({"--events=kokkos,"});
  REQUIRE(trailing.errors.size() == 1);
  CHECK(contains(trailing.errors[0], "''"));
  CHECK(trailing.c.events == kob::kGroupKokkos);
  const Applied fmt = apply({"--format=htm,json"});
  REQUIRE(fmt.errors.size() == 1);
  CHECK(contains(fmt.errors[0], "'htm'"));
  CHECK(contains(fmt.errors[0], "did you mean 'html'?"));
  CHECK(fmt.c.formats == kob::kFormatJson);
  // An unknown option: the nearest one, when one is near.
  const Applied typo = apply({"--fromat=json"});
  REQUIRE(typo.errors.size() == 1);
  CHECK(contains(typo.errors[0], "did you mean '--format'?"));
  CHECK(contains(apply({"--zzzzzz"}).errors.at(0), "(accepted: --output"));
}

TEST_CASE("config: flags") {
  CHECK(apply({"--quiet"}).c.quiet);
  CHECK_FALSE(apply({"--quiet", "--quiet=false"}).c.quiet);
  CHECK(apply({"--quiet=true"}).c.quiet);
  CHECK(apply({"--quiet=1"}).c.quiet);
  CHECK_FALSE(apply({"--quiet=no"}).c.quiet);
  CHECK(apply({"--help=yes"}).c.help);
  CHECK_FALSE(apply({"--exact-kernel-end=off"}).c.exact_kernel_end);
  CHECK(apply({"--log-level=off"}).c.log_level == kob::log::Level::Off);
  CHECK(apply({"--log-level=trace"}).c.log_level == kob::log::Level::Trace);
}

TEST_CASE("config: each bad argument gives one error line and changes nothing") {
  check_rejected("--nope=1", "'--nope'");
  check_rejected("--nope", "'--nope'");
  check_rejected("--", "'--'");
  check_rejected("--events=gpu", "'gpu'");
  check_rejected("--events=,", "''");
  check_rejected("--format=pdf", "'pdf'");
  check_rejected("--format=", "--format");
  check_rejected("--include=(", "--include=(");
  check_rejected("--exclude=[a-", "--exclude=[a-");
  check_rejected("--memory-limit=abc", "--memory-limit=abc");
  check_rejected("--memory-limit=0", "--memory-limit=0");
  check_rejected("--memory-limit=12x", "--memory-limit=12x");
  check_rejected("--memory-limit=-5", "--memory-limit=-5");
  check_rejected("--memory-limit=99999999999999999999999", "--memory-limit");
  check_rejected("--memory-limit", "needs a value");
  check_rejected("--max-trace-size=-1", "--max-trace-size=-1");
  check_rejected("--max-trace-size=1M", "--max-trace-size=1M");
  check_rejected("--jobs=17", "--jobs=17");
  check_rejected("--jobs=-1", "--jobs=-1");
  check_rejected("--jobs=two", "--jobs=two");
  check_rejected("--output", "needs a value");
  check_rejected("--output=", "--output");
  check_rejected("--events", "needs a value");
  check_rejected("--quiet=maybe", "--quiet=maybe");
  check_rejected("--log-level=loud", "--log-level=loud");
  check_rejected("--device-trace-region=", "--device-trace-region");
  check_rejected("--device-trace-region", "needs a value");
  check_rejected("quiet", "'quiet'");
  check_rejected("-q", "'-q'");
}

TEST_CASE("config: --memory-limit up to the largest MiB count whose bytes fit in 64 bits") {
  CHECK(apply({"--memory-limit=17592186044415"}).c.memory_limit_mib == 17592186044415ull);  // 2^44 - 1
  CHECK(apply({"--memory-limit=17592186044415"}).errors.empty());
  // 2^44 MiB and more used to wrap to a cap of 0 bytes (<< 20).
  check_rejected("--memory-limit=17592186044416", "expected a number of MiB from 1 to 17592186044415");
  check_rejected("--memory-limit=18446744073709551615", "expected a number of MiB from 1 to 17592186044415");
  check_rejected("--memory-limit=0", "expected a number of MiB from 1 to 17592186044415");
}

TEST_CASE("config: --include/--exclude take RE2 syntax; a pattern RE2 refuses is one line with its reason") {
  const Applied ok = apply({"--include=^Kokkos::(View|Impl)\\b", "--exclude=(?i)INIT\\pL*"});
  CHECK(ok.errors.empty());
  CHECK(ok.c.include == "^Kokkos::(View|Impl)\\b");
  CHECK(ok.c.exclude == "(?i)INIT\\pL*");
  check_rejected("--include=(", "not a valid RE2 regular expression (missing ): ()");
  check_rejected("--include=(?=look)ahead", "not a valid RE2 regular expression");  // no lookaround in RE2
  check_rejected("--exclude=(a)\\1", "not a valid RE2 regular expression");       // no backreferences
  check_rejected("--include=a{1001}", "invalid repetition size");
  check_rejected("--include=\\pL{1000}", "pattern too large");                    // past RE2's max_mem
}

TEST_CASE("config: a warning echoes a user's argument escaped and cut") {
  const std::string value = "(\x1b[31m" + std::string(5000, 'x') + "\r";
  const Applied r = apply({"--include=" + value, "--" + std::string(3000, 'k') + "\x01"});
  REQUIRE(r.errors.size() == 2);
  for (const std::string& e : r.errors) {
    CAPTURE(e);
    CHECK(e.size() < 400);
    for (const char ch : e) CHECK(static_cast<unsigned char>(ch) >= 0x20);
    CHECK(contains(e, "..."));
  }
  CHECK(contains(r.errors[0], "--include=(\\x1b[31mxxx"));
  CHECK(contains(r.errors[0], "xxx\\r'"));
}

TEST_CASE("config: bad arguments do not stop the others") {
  const Applied r = apply({"--quiet", "--bogus", "--format=chrome", "--events=xyz", "stray", "--memory-limit=abc",
                           "--include=(", "--output=out", "--memory-limit=8", "--output"});
  CHECK(r.errors.size() == 6);
  CHECK(r.c.quiet);
  CHECK(r.c.formats == kob::kFormatChrome);
  CHECK(r.c.events == kob::kGroupAll);
  CHECK(r.c.include.empty());
  CHECK(r.c.output == "out");
  CHECK(r.c.memory_limit_mib == 8);
  // Errors come in argument order.
  REQUIRE(r.errors.size() == 6);
  CHECK(contains(r.errors[0], "--bogus"));
  CHECK(contains(r.errors[1], "xyz"));
  CHECK(contains(r.errors[2], "stray"));
  CHECK(contains(r.errors[3], "abc"));
  CHECK(contains(r.errors[4], "--include"));
  CHECK(contains(r.errors[5], "--output"));
}

TEST_CASE("config: split_args") {
  CHECK(kob::split_args("") == Args{});
  CHECK(kob::split_args(" \t\n ") == Args{});
  CHECK(kob::split_args("--quiet") == Args{"--quiet"});
  CHECK(kob::split_args("  --a=1\t--b  \n--c ") == Args{"--a=1", "--b", "--c"});
  CHECK(kob::split_args("--events=kokkos,omp-task --format=chrome") == Args{"--events=kokkos,omp-task", "--format=chrome"});
}

TEST_CASE("config: help lists every option with its default") {
  const std::string help = kob::help_text();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"--output=PREFIX", "kob-<executable>-<pid>[-r<rank>]"},
      {"--format=LIST", "perfetto,summary,json"},
      {"--events=LIST", "all"},
      {"--include=REGEX", "(none)"},
      {"--exclude=REGEX", "(none)"},
      {"--quiet", "false"},
      {"--log-level=LEVEL", "warn"},
      {"--memory-limit=MIB", "64"},
      {"--max-trace-size=MIB", "0"},
      {"--jobs=N", "0"},
      {"--exact-kernel-end", "false"},
      {"--device-trace-region=NAME", "(none)"},
      {"--chain=LIB", "(none)"},
      {"--chain-arg=WORD", "(none)"},
      {"--help", "false"},
  };
  std::istringstream in(help);
  std::string line;
  std::vector<std::string> option_lines;
  while (std::getline(in, line))
    if (line.rfind("  --", 0) == 0) option_lines.push_back(line);
  REQUIRE(option_lines.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(option_lines[i]);
    const auto& [left, def] = expected[i];
    CHECK(option_lines[i].rfind("  " + left + " ", 0) == 0);
    const std::string tail = "(default: " + def + ")";
    CHECK(option_lines[i].size() > tail.size());
    CHECK(option_lines[i].compare(option_lines[i].size() - tail.size(), tail.size(), tail) == 0);
  }
  // Every event group is named in the help of --events.
  for (const char* g : {"kokkos", "omp-parallel", "omp-work", "omp-sync", "omp-task", "omp-mutex", "omp-target", "omp-device"})
    CHECK(contains(help, g));
}

TEST_CASE("config: --chain and --chain-arg") {
  kob::Config c;
  std::vector<std::string> errors;
  c.apply({"--chain=/opt/kp/libkp_kernel_timer.so", "--chain-arg=--verbose", "--chain-arg=2", "--chain-arg="}, errors);
  CHECK(errors.empty());
  CHECK(c.chain == "/opt/kp/libkp_kernel_timer.so");
  CHECK(c.chain_args == std::vector<std::string>{"--verbose", "2", ""});
  c.apply({"--chain="}, errors);  // an empty library: one line, the one before stays
  REQUIRE(errors.size() == 1);
  CHECK(contains(errors[0], "--chain"));
  CHECK(c.chain == "/opt/kp/libkp_kernel_timer.so");
}

TEST_CASE("config: group_names") {
  CHECK(kob::group_names(0) == "");
  CHECK(kob::group_names(kob::kGroupKokkos | kob::kGroupOmpTask) == "kokkos,omp-task");
  CHECK(kob::group_names(kob::kGroupAll) == "kokkos,omp-parallel,omp-work,omp-sync,omp-task,omp-mutex,omp-target,omp-device");
}
