// What each process of a run started by `kob run` wrote, for kob run to say at the end: the
// library appends one line per process to the file KOB_RUN_REPORT names (set by kob run only).
#pragma once

#include <string>
#include <vector>

namespace kob::run_report {

inline constexpr const char* kVariable = "KOB_RUN_REPORT";

struct Entry {
  long pid = 0;
  std::vector<std::string> files;
};

// Appends this process's line (one write on an O_APPEND file: processes of one run do not mix
// their lines); nothing when the variable is not set. Never fails loudly.
void append(long pid, const std::vector<std::string>& files);
// The lines of a report file, in the order written.
std::vector<Entry> read(const std::string& path);

}  // namespace kob::run_report
