// The state of SummaryFold (summary_fold.hpp), shared by its three parts: Kokkos
// (summary_fold.cpp), OpenMP (summary_fold_omp.cpp) and target offload (summary_fold_target.cpp).
// Internal: include it from those files only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/timeline/omp_names.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/analysis/summary_fold_constructs.hpp"
#include "common/support/pooled_map.hpp"

namespace kob {
namespace summary_fold_detail {

// A kernel row: its name, kind and the execution space (and device) it ran on, as Kokkos named it:
// one name run on two spaces is two rows.
struct KernelKey {
  std::uint32_t name = 0;
  KernelKind kind = KernelKind::ParallelFor;
  std::uint32_t space = 0;  // the device id's type and device number (devid >> 17), not its instance
  auto operator<=>(const KernelKey&) const = default;
};
inline std::uint32_t space_of(std::uint32_t devid) { return devid >> 17; }
using CopyKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;  // dst name, src name, dst space, src space
using CopySiteKey = std::pair<CopyKey, std::uint64_t>;                                   // and bytes
using AllocSiteKey = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>;             // name, space, bytes

// The tracks a row's spans ran on: which of them dropped events is known only at finish.
inline void add_track(std::vector<std::uint32_t>& v, std::uint32_t track) {
  if (std::find(v.begin(), v.end(), track) == v.end()) v.push_back(track);
}

struct KernelAcc {
  std::uint64_t calls = 0, total = 0, min = 0, max = 0;
  std::uint64_t first_start = 0;  // the device is the earliest call's, as in a Timeline sorted by start
  std::uint32_t devid = 0;
  std::vector<std::uint32_t> tracks;
  std::vector<std::uint64_t> durations;  // every call's, only for SummaryFold::set_call_times
};

struct RegionAcc {
  RegionStats st;
  std::vector<std::uint32_t> tracks;
  std::vector<std::uint64_t> durations;  // as KernelAcc's
};

// Additive OpenMP figures of one Kokkos kernel (or of one kernel id still to come), or of one
// parallel construct's regions.
using OmpAcc = OmpTeamStats;

// A parallel region whose implicit tasks have not all arrived (or whose tasks came first).
struct ParallelJoin {
  bool have_parallel = false;
  bool counted = false;  // in the figures: not the hidden-helper team's, inside a kernel
  std::uint64_t kernel = 0;
  std::uint32_t construct = ConstructRows::kNoRow;  // outside kernels: its row in the constructs table
  std::uint32_t team_size = 0, track = 0, tasks = 0;
  std::uint64_t end = 0;
  std::uint64_t max_busy = 0, sum_busy = 0, task_time = 0, wait_time = 0;
  // The work constructs run in it, per construct row (kNoRow: those without one) and thread.
  std::vector<ConstructRows::WorkPart> work;
  // What its threads did inside (OmpTeamStats' construct figures): the busiest thread's time in
  // worksharing constructs and explicit tasks and their sum, whether any ran, whether a loop did,
  // how many of its threads created tasks; what the region asked for.
  std::uint64_t max_work = 0, sum_work = 0;
  bool constructs = false, loop = false, tasks_ran = false;
  std::uint32_t creators = 0, requested = 0, level = 0;
};

// Figures for a kernel id not seen yet. Its parallel regions ran on `track` and the last ended at
// `after`: a kernel or parallel region on that track that starts later and belongs to another
// kernel (or to none) means the kernel was closed by then (a Kokkos dispatch launches nothing on
// its thread after its parallel region), so if it has not come it never will (dropped by
// --include/--exclude) and its figures are dropped, as the walk over a whole timeline skipped them.
struct KernelWait {
  OmpAcc acc;
  std::uint32_t track = 0;
  std::uint64_t after = 0;
};

// Kernels that arrived while some of their parallel regions still wait for implicit tasks.
struct KernelRef {
  std::uint32_t open = 0;  // joins with their parallel region in, tasks missing
  bool known = false;
  KernelKey key{};
};

// Kept regions not yet taken by the region that holds them. Regions of one path waiting at the
// same time share their fate (see region()), so they wait as one entry.
struct RegionWait {
  std::uint64_t end = 0;   // the first one's
  std::uint32_t depth = 0;
  std::uint64_t sum = 0;   // their time
  const std::string* path = nullptr;  // its key in by_path
};

struct TrackRegions {
  std::multimap<std::uint64_t, RegionWait> by_start;  // by the first one's start
  std::map<std::string, std::multimap<std::uint64_t, RegionWait>::iterator> by_path;
};

struct OmpTrackAcc {
  std::uint64_t initial_tasks = 0, implicit_tasks = 0, busy = 0;
  std::map<std::uint16_t, OmpCountStats> work, sync;
  // Explicit tasks run and created on this thread since its last implicit task ended: the next
  // implicit task to end on it held them (spans come at their end, nested ones first); when the
  // latest of them ended before that task started, they ran outside it and are left out.
  std::uint64_t task_run = 0, task_run_end = 0, tasks_created = 0;
  // Stretches since the latest work construct ended here: a construct that ends next and started
  // before the latest of them ended held them (a `single` whose thread runs tasks as it creates
  // them), and its time counts them already.
  std::uint64_t recent_run = 0, recent_end = 0;
  // The latest task created here, its site's row and when; no row once a task has run since (the
  // gap to the next creation then holds more than the cost of creating one).
  std::uint32_t last_create_row = UINT32_MAX;
  std::uint64_t last_create_time = 0;
};

struct TargetOps {
  std::map<std::uint16_t, TargetOpStats> ops;
  std::uint64_t first_start = 0;
};

// A few recent id -> value pairs, for the rare span that arrives after the one it names.
template <class V, std::size_t N = 64>
struct Recent {
  std::array<std::pair<std::uint64_t, V>, N> items{};
  std::size_t next = 0, size = 0;
  // The largest id put: ids are numbered in order, and most lookups are for one newer than any
  // put so far (a kernel's parallel region, credited before the kernel ends): no scan for those.
  std::uint64_t max_id = 0;
  void put(std::uint64_t id, const V& v) {
    items[next] = {id, v};
    next = (next + 1) % N;
    size = std::min(size + 1, N);
    max_id = std::max(max_id, id);
  }
  V* find(std::uint64_t id) {
    if (id > max_id) return nullptr;
    for (std::size_t i = 0; i < size; ++i)
      if (items[i].first == id) return &items[i].second;
    return nullptr;
  }
};

struct RecentCopy {
  CopyKey key{};
  std::uint64_t bytes = 0;
  bool counted = false;  // its call is in the deep-copy row
};

}  // namespace summary_fold_detail

struct SummaryFold::State {
  using KernelKey = summary_fold_detail::KernelKey;
  using CopyKey = summary_fold_detail::CopyKey;
  using KernelAcc = summary_fold_detail::KernelAcc;
  using RegionAcc = summary_fold_detail::RegionAcc;
  using OmpAcc = summary_fold_detail::OmpAcc;
  using ConstructRows = summary_fold_detail::ConstructRows;
  using ParallelJoin = summary_fold_detail::ParallelJoin;
  using KernelWait = summary_fold_detail::KernelWait;
  using KernelRef = summary_fold_detail::KernelRef;
  using TrackRegions = summary_fold_detail::TrackRegions;
  using OmpTrackAcc = summary_fold_detail::OmpTrackAcc;
  using TargetOps = summary_fold_detail::TargetOps;
  using RecentCopy = summary_fold_detail::RecentCopy;
  template <class V>
  using Recent = summary_fold_detail::Recent<V>;

  // Kokkos.
  std::map<KernelKey, KernelAcc> kernels;
  std::map<std::string, RegionAcc> regions;
  std::vector<TrackRegions> region_tracks;
  std::map<std::uint32_t, MemoryStats> memory;
  std::map<std::pair<std::uint32_t, std::uint32_t>, CopyStats> copies;
  std::map<std::uint32_t, NamedStats> fences, sections;
  std::map<std::uint32_t, NamedStats> mpi_calls;  // by call (record/mpi_calls.hpp)
  std::map<summary_fold_detail::CopySiteKey, CopySiteStats> copy_sites;  // names filled at finish
  std::map<summary_fold_detail::AllocSiteKey, std::uint64_t> alloc_sites;  // allocations
  std::uint64_t sites_untracked = 0;
  std::uint64_t profile_events = 0, dual_view_syncs = 0, dual_view_modifies = 0;

  // OpenMP.
  std::vector<OmpTrackAcc> omp_tracks;
  std::uint64_t parallel_regions = 0, outside_regions = 0, outside_time = 0;
  PooledMap<std::uint64_t, ParallelJoin> joins;
  PooledMap<std::uint64_t, KernelWait> waits;
  PooledMap<std::uint64_t, KernelRef> refs;
  Recent<KernelKey> recent_kernels;
  std::map<KernelKey, OmpAcc> omp_kernels;
  std::map<std::uint16_t, OmpCountStats> dispatch;
  std::map<std::uint16_t, OmpMutexStats> mutex;
  OmpSummary counts;  // the plain counters
  ConstructRows constructs;  // outside kernels, by source location
  // The latest start of a Kokkos kernel given so far (any track; 0: none yet). Spans come at their
  // end, so a parallel region given after a kernel that started inside it held that kernel.
  std::uint64_t latest_kernel_start = 0;
  bool kernel_seen = false;

  // Target.
  std::map<int, TargetDeviceStats> devs;
  std::uint64_t regions_in_kernels = 0, regions_outside = 0;
  std::map<int, std::map<std::uint16_t, OmpCountStats>> target_regions;
  std::map<int, std::map<std::uint16_t, TargetOpStats>> ops;
  std::map<int, std::map<int, TargetOpStats>> dirs;
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> live;  // (device, address) -> bytes allocated there
  std::map<int, std::uint64_t> level;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> submits_waiting;  // target id -> count, ns
  Recent<int> recent_targets;
  std::unordered_map<std::uint64_t, TargetOps> copy_ops_waiting;  // deep copy id -> its data ops
  Recent<RecentCopy> recent_copies;
  std::map<CopyKey, TargetCopyStats> per_copy;
  std::map<CopyKey, TargetOps> copy_ops;
  std::vector<CopyKey> copy_order;  // first credited first; sorted by first data op at finish

  TargetDeviceStats& dev(int n) {
    TargetDeviceStats& d = devs[n];
    d.device = n;
    return d;
  }
  OmpTrackAcc& omp_track(std::uint32_t track) {
    if (track >= omp_tracks.size()) omp_tracks.resize(track + 1);
    return omp_tracks[track];
  }
  TrackRegions& region_track(std::uint32_t track) {
    if (track >= region_tracks.size()) region_tracks.resize(track + 1);
    return region_tracks[track];
  }

  const KernelKey* kernel_key(std::uint64_t id) {
    auto r = refs.find(id);
    if (r != refs.end() && r->second.known) return &r->second.key;
    return recent_kernels.find(id);
  }

  void credit(std::uint64_t kernel, const OmpAcc& acc, std::uint32_t track, std::uint64_t end) {
    if (const KernelKey* key = kernel_key(kernel)) {
      omp_kernels[*key].add(acc);
      return;
    }
    KernelWait& w = waits[kernel];
    w.acc.add(acc);
    w.track = track;
    w.after = std::max(w.after, end);
  }

  // A span on `track` from `start` that belongs to kernel id `kernel` (0: none).
  void expire_waits(std::uint32_t track, std::uint64_t start, std::uint64_t kernel) {
    for (auto it = waits.begin(); it != waits.end();) {
      if (it->first != kernel && it->second.track == track && start >= it->second.after) {
        it = waits.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The figures of one region from its implicit tasks (j.tasks > 0), for its kernel or construct.
  static OmpAcc region_figures(const ParallelJoin& j) {
    const bool work = j.constructs;
    OmpAcc r = summary_fold_detail::one_region(j.tasks, work ? j.max_work : j.max_busy, work ? j.sum_work : j.sum_busy,
                                               j.task_time, j.wait_time);
    r.implicit_busy_max = j.max_busy;
    r.construct_regions = j.constructs ? 1 : 0;
    r.loop_regions = j.loop ? 1 : 0;
    r.task_regions = j.tasks_ran || j.creators != 0 ? 1 : 0;
    r.producer_regions = j.creators == 1 ? 1 : 0;
    r.requested_one = j.requested == 1 ? 1 : 0;
    r.nested_regions = j.level != 0 ? 1 : 0;
    return r;
  }

  void complete(std::uint64_t parallel_id, ParallelJoin& j) {
    if (j.counted) {
      if (j.tasks != 0) credit(j.kernel, region_figures(j), j.track, j.end);
      auto r = refs.find(j.kernel);
      if (r != refs.end() && --r->second.open == 0) refs.erase(r);
    }
    if (j.construct != ConstructRows::kNoRow && j.tasks != 0) constructs.team(j.construct, region_figures(j));
    if (!j.work.empty()) constructs.work_team(j.work);
    joins.erase(parallel_id);
  }

  void target_op(const OmpDataOpSpan& x, TargetOps& into) {
    TargetOpStats& op = into.ops[x.optype];
    op.name = omp_names::data_op(x.optype);
    ++op.count;
    op.bytes += x.bytes;
    op.time += x.dur();
  }

  // Data ops of one deep copy into its row; new_call: the copy's first ops (its call and bytes count once).
  void credit_copy(const CopyKey& key, std::uint64_t first_start, const TargetOps& from, bool new_call, std::uint64_t bytes) {
    auto [pc, fresh] = per_copy.try_emplace(key);
    TargetOps& into = copy_ops[key];
    if (fresh) {
      copy_order.push_back(key);
      into.first_start = first_start;
    }
    into.first_start = std::min(into.first_start, first_start);
    if (new_call) {
      ++pc->second.calls;
      pc->second.bytes += bytes;
    }
    for (const auto& [type, op] : from.ops) {
      TargetOpStats& d = into.ops[type];
      d.name = op.name;
      d.count += op.count;
      d.bytes += op.bytes;
      d.time += op.time;
    }
  }
};

}  // namespace kob
