// `kob convert` and `kob summary`: raw traces to the usual files, or to a summary on stdout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kob::cli {

struct ConvertRequest {
  std::vector<std::string> runs;  // PREFIX.kob or PREFIX
  bool formats_given = false;     // false: the formats the run was recorded with
  std::uint32_t formats = 0;
  std::string output;             // one RUN only
  bool quiet = false;
  std::size_t trace_window = 0;   // 0: the default
  unsigned jobs = 0;              // 0: the idle cores
};

// --to=LIST and --trace-window=SPANS values; false (and one line on stderr) when bad.
bool parse_formats(const std::string& list, std::uint32_t& formats);
bool parse_trace_window(const std::string& value, std::size_t& spans);
bool parse_jobs(const std::string& value, unsigned& jobs);

// Exit status: 0 every RUN converted; 1 a RUN could not be read or a file not written; 2 usage.
int convert_runs(const ConvertRequest& request);
// The text summary of each RUN on stdout, no file written. Exit status as convert_runs.
int summary_runs(const std::vector<std::string>& runs);

}  // namespace kob::cli
