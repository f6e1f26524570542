// `kob report`: the self-contained HTML report of one run, or of several (the ranks of an MPI job,
// a row each), from their raw traces.
#pragma once

#include <string>
#include <vector>

namespace kob::cli {

struct ReportRequest {
  std::vector<std::string> runs;  // PREFIX.kob or PREFIX
  std::string output;             // FILE.html; empty: the first RUN's PREFIX.html
  bool quiet = false;
};

// Exit status: 0 written; 1 a RUN could not be read or the file not written; 2 usage.
int report_runs(const ReportRequest& request);

}  // namespace kob::cli
