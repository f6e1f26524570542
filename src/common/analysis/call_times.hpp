// Every call's duration per kernel, region and OpenMP construct of one run, for the noise model of
// kob diff (noise_model.hpp). SummaryFold fills it when given one (set_call_times), from the
// timeline builder's spans or the per-thread engine's folds (EngineRun::calls); the summary itself
// keeps only sums, so that its memory does not follow the run's length.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kob {

struct CallTimes {
  using Durations = std::vector<std::uint64_t>;  // ns, in no set order (the per-thread engine adds a thread's calls at once; the noise model sorts)
  std::map<std::tuple<std::string, std::string, std::uint32_t>, Durations> kernels;  // (name, kind, space) as in KernelStats
  std::map<std::string, Durations> regions;                          // path, inclusive time
  // OmpConstructStats::place_key(); a call's time as the row's total counts it (a lock: the wait
  // to acquire it and the hold; a task: its run time, all its stretches).
  std::map<std::string, Durations> constructs;
};

}  // namespace kob
