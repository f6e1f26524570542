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
// fork_join_overhead: kernel (region) time minus the busiest thread's work, as a share of it. Its
// work: the time in worksharing constructs and explicit tasks where the region had any, else its
// implicit task's time minus its waits (OmpTeamStats::busy_max).
constexpr double kForkJoinShare = 0.5;
// serialized_region: an `omp parallel` site whose regions all had a team of 1 while the run had
// more OpenMP threads (serialized_kernel: the same for an OpenMP-backend Kokkos kernel).
// task_granularity: at least this many tasks created at one site, whose mean run time is under
// kTinyTaskNs or under what creating and starting one costs (creation gap + start delay).
constexpr std::uint64_t kManyTasks = 1000;
constexpr std::uint64_t kTinyTaskNs = 1000;
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
