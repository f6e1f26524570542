// The tool's options: declared once in a table that parses them and prints the help.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/support/log.hpp"

namespace kob {

// Event groups for --events. Bit positions are stable: the hot path tests them.
enum EventGroup : std::uint32_t {
  kGroupKokkos = 1u << 0,
  kGroupOmpParallel = 1u << 1,
  kGroupOmpWork = 1u << 2,
  kGroupOmpSync = 1u << 3,
  kGroupOmpTask = 1u << 4,
  kGroupOmpMutex = 1u << 5,
  kGroupOmpTarget = 1u << 6,
  kGroupOmpDevice = 1u << 7,
  kGroupAllOmp = kGroupOmpParallel | kGroupOmpWork | kGroupOmpSync | kGroupOmpTask | kGroupOmpMutex |
                 kGroupOmpTarget | kGroupOmpDevice,
  kGroupAll = kGroupKokkos | kGroupAllOmp,
};

enum OutputFormat : std::uint32_t {
  kFormatChrome = 1u << 0,
  kFormatSummary = 1u << 1,
  kFormatJson = 1u << 2,
  kFormatPerfetto = 1u << 3,
  kFormatOtf2 = 1u << 4,
  kFormatHtml = 1u << 5,
  kFormatSqlite = 1u << 6,
  kFormatAll = kFormatChrome | kFormatSummary | kFormatJson | kFormatPerfetto | kFormatOtf2 | kFormatHtml | kFormatSqlite,
  kFormatDefault = kFormatPerfetto | kFormatSummary | kFormatJson,
};

struct Config {
  std::string output;  // file prefix; empty means the default kob-<exe>-<pid>[-r<rank>]
  std::uint32_t formats = kFormatDefault;
  std::uint32_t events = kGroupAll;
  std::string include;  // RE2 patterns on Kokkos kernel and region names (common/timeline/name_filter.hpp); empty: no filter
  std::string exclude;
  bool quiet = false;
  log::Level log_level = log::Level::Warn;
  bool help = false;
  bool exact_kernel_end = false;
  std::uint64_t memory_limit_mib = 64;
  std::uint64_t max_trace_size_mib = 0;  // --max-trace-size; 0: no cap
  unsigned jobs = 0;  // --jobs: threads making the trace events at the end; 0: OutputRequest's default
  // --device-trace-region: device tracing (OMPT device tracing interface) is paused except while
  // a Kokkos profile region of this name is open on some thread. Empty: traced all the time.
  std::string device_trace_region;
  // --chain: the Kokkos tool library run beside this one (kokkos_hooks/kokkos_chain); --chain-arg:
  // its parse_args words, every route's in order.
  std::string chain;
  std::vector<std::string> chain_args;

  // Applies "--key=value" / "--flag" arguments in order. Each bad one adds one line to errors and
  // is skipped; the others still apply. Arguments not starting with "--" are errors too.
  void apply(const std::vector<std::string>& args, std::vector<std::string>& errors);
};

// Splits an environment-style argument string on blanks.
std::vector<std::string> split_args(std::string_view text);

// "--output=PREFIX  ... (default: ...)" lines for every option.
std::string help_text();

// Names of the groups set in a mask, comma separated.
std::string group_names(std::uint32_t mask);
// Names of the output formats set in a mask, comma separated, as --format accepts them ("none" for 0).
std::string format_names(std::uint32_t mask);

}  // namespace kob
