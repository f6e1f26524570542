// Findings: ranked advice computed from a Summary. Each rule looks at figures the summary already
// holds, estimates the time a fix may give back ("time at stake") and fires only when that time
// matters: at least kMinShare of the run and at least kMinStakeNs (incomplete_data always fires).
// The README's "Findings" section documents every rule; keep the two in step.
#pragma once

#include <cstdint>
#include <vector>

#include "common/analysis/summary.hpp"

namespace kob::findings {

// The gate every rule but incomplete_data passes: what is at stake must matter.
constexpr double kMinShare = 0.01;             // of the run time
constexpr std::uint64_t kMinStakeNs = 100'000;  // 100 us

// The team rules (fork_join_overhead, load_imbalance) judge each Kokkos kernel's OpenMP regions and
// each `omp parallel` site outside kernels (OmpSummary::constructs) alike, but for sites that held
// Kokkos kernels, Kokkos' own sites, and (fork and join only) sites run once; lock_contention judges
// each mutex acquire site there, and each mutex kind for the waits no site row holds.
// fork_join_overhead: kernel (region) time minus the busiest task's busy time, as a share of it.
constexpr double kForkJoinShare = 0.5;
// load_imbalance: OmpTeamStats::load_imbalance().
constexpr double kImbalance = 0.25;
// repeated_deep_copy / alloc_in_loop: the same copy or allocation this many times.
constexpr std::uint64_t kRepeats = 10;
// lock_contention: wait / (wait + hold) of one mutex site or kind.
constexpr double kLockWaitShare = 0.25;
// fence_dominated, transfer_hotspot: share of the run.
constexpr double kFenceShare = 0.10;
constexpr double kTransferShare = 0.10;

// Every rule that fires, ranked by time at stake (largest first; ties in rule order).
std::vector<Finding> find(const Summary& s);

}  // namespace kob::findings
