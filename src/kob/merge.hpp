// `kob merge`: the raw traces of several processes (MPI ranks, or any runs) on one time line, as
// one Perfetto trace (a process per run), one OTF2 archive (a location group per run) and one
// merged summary (per kernel and region, min / mean / max over the ranks and their imbalance).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kob::cli {

struct MergeRequest {
  std::vector<std::string> runs;  // PREFIX.kob or PREFIX
  std::string output;             // OUT: OUT.pftrace, OUT.otf2/, OUT.summary.txt, OUT.summary.json
  std::uint32_t formats = 0;      // 0: the default (perfetto, otf2, summary, json)
  bool quiet = false;
};

// The formats kob merge can write; false (and one line on stderr) for another.
bool merge_formats_ok(std::uint32_t formats);

// Exit status: 0 merged; 1 a RUN could not be read or a file not written; 2 usage.
int merge_runs(const MergeRequest& request);

}  // namespace kob::cli
