// The run, reconstructed from all threads' records at the end: matched begin/end pairs with
// nanosecond times, region paths, memory levels. Writers and the summary read only this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "common/recorder.hpp"

namespace kob {

struct Track {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  int omp_thread_type = 0;
  std::uint64_t omp_wait_ns = 0;  // all OpenMP sync-region waits of this thread, inside a sync region or not
};

struct Interval {
  std::uint64_t start = 0;  // ns on the CLOCK_MONOTONIC_RAW time line
  std::uint64_t end = 0;
  std::uint32_t track = 0;  // index into Timeline::tracks
  std::uint64_t dur() const { return end - start; }
};

struct KernelSpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t name = 0;
  KernelKind kind = KernelKind::ParallelFor;
  std::uint32_t devid = 0;
  std::string region;  // path of the innermost open region on the launching thread, or ""
};

struct FenceSpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t name = 0;
  std::uint32_t devid = 0;
};

struct RegionSpan : Interval {
  std::uint32_t name = 0;
  std::string path;  // "a/b/c", this region last
  std::uint32_t depth = 0;
};

struct SectionSpan : Interval {
  std::uint32_t section = 0;
  std::uint32_t name = 0;
  std::uint32_t end_track = 0;
};

struct DeepCopySpan : Interval {
  std::uint64_t id = 0;
  std::uint32_t dst_space = 0, dst_name = 0, src_space = 0, src_name = 0;
  std::uint64_t bytes = 0;
};

struct MemoryEvent {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  bool alloc = true;
  std::uint32_t space = 0, name = 0;
  std::uint64_t ptr = 0, bytes = 0;
  std::uint64_t space_level = 0;  // bytes allocated in that space after this event
};

struct InstantEvent {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  std::uint32_t name = 0;
};

struct DualViewEvent : InstantEvent {
  bool modify = false;
  bool on_device = false;
  std::uint64_t ptr = 0;
};

// OpenMP (OMPT). kernel: the Kokkos kernel id the event belongs to, 0 = none.
struct OmpParallelSpan : Interval {  // on the encountering thread
  std::uint64_t id = 0, kernel = 0;
  std::uint32_t requested_team_size = 0, flags = 0;
  std::uint32_t team_size = 0;  // implicit tasks seen for this region (initial tasks excluded)
  std::uint32_t level = 0;      // implicit tasks open on the encountering thread at its start (0: outermost)
};

struct OmpImplicitTaskSpan : Interval {
  std::uint64_t parallel_id = 0, kernel = 0;
  std::uint32_t thread_num = 0, team_size = 0;
  bool initial = false;         // the initial task (flag ompt_task_initial)
  std::uint32_t level = 0;      // other (non-initial) implicit tasks open on this thread at its start
  std::uint64_t wait_ns = 0;    // sync-region waits of this thread inside it
  std::uint64_t busy() const { return dur() - (wait_ns < dur() ? wait_ns : dur()); }
};

struct OmpWorkSpan : Interval {
  std::uint16_t type = 0;  // ompt_work_t; omp_names::kMasked (0) for a masked region
  std::uint64_t parallel_id = 0, kernel = 0, count = 0;
};

struct OmpSyncSpan : Interval {
  std::uint16_t kind = 0;  // ompt_sync_region_t
  std::uint64_t parallel_id = 0, kernel = 0, task_id = 0;
  std::uint64_t wait_ns = 0;  // waits of the same kind nested in it on its thread
};

struct OmpTaskCreate {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  std::uint64_t task_id = 0, kernel = 0;
  std::uint32_t flags = 0;
  bool has_dependences = false;
};

// One stretch of an explicit task on one thread: from the schedule that names it as next to the
// next schedule on that thread that names it as prior.
struct OmpTaskSpan : Interval {
  static constexpr std::size_t kNoCreate = static_cast<std::size_t>(-1);
  std::uint64_t task_id = 0, kernel = 0;  // kernel of its creator
  std::uint32_t flags = 0;                // from its task_create
  std::uint32_t status = 0;               // ompt_task_status_t that ended it; 0: never ended
  std::size_t create = kNoCreate;         // index into Timeline::omp_task_creates
};

struct OmpMutexSpan : Interval {
  std::uint16_t kind = 0;  // ompt_mutex_t family: lock, nest_lock, critical, atomic, ordered
  bool hold = false;       // false: waiting to acquire, true: holding
  bool nested = false;     // hold only: a nested re-acquisition of a nest lock the thread holds
  std::uint64_t wait_id = 0, kernel = 0;
};

// Every other OpenMP event, shown as an instant: dispatch, dependences, task dependence, lock
// init/destroy, cancel, flush, control tool. The fields are the record's.
struct OmpInstant {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  Ev type = Ev::None;
  std::uint16_t sub = 0;
  std::uint32_t a = 0;
  std::uint64_t u0 = 0, u2 = 0, kernel = 0;
};

struct Timeline {
  std::vector<Track> tracks;
  std::vector<KernelSpan> kernels;
  std::vector<FenceSpan> fences;
  std::vector<RegionSpan> regions;
  std::vector<SectionSpan> sections;
  std::vector<DeepCopySpan> deep_copies;
  std::vector<MemoryEvent> memory;  // sorted by time
  std::vector<InstantEvent> events;
  std::vector<DualViewEvent> dual_views;
  // OpenMP, spans sorted by start.
  std::vector<OmpParallelSpan> omp_parallels;
  std::vector<OmpImplicitTaskSpan> omp_implicit_tasks;
  std::vector<OmpWorkSpan> omp_works;
  std::vector<OmpSyncSpan> omp_syncs;
  std::vector<OmpTaskCreate> omp_task_creates;
  std::vector<OmpTaskSpan> omp_tasks;
  std::vector<OmpMutexSpan> omp_mutexes;
  std::vector<OmpInstant> omp_instants;
  std::uint64_t omp_records = 0;          // OpenMP records read (0: OMPT recorded nothing)
  std::uint64_t omp_tasks_completed = 0;  // explicit tasks that left a thread as complete or fulfilled
  std::uint64_t t0 = 0;        // earliest event, ns
  std::uint64_t t_end = 0;     // latest event, ns
  std::uint64_t dropped = 0;   // events lost to the memory cap
  std::vector<std::string> problems;  // odd hook orders, unknown ids...: one line each
  std::uint64_t filtered_kernels = 0, filtered_regions = 0;
};

// Reads the given threads' records (normally recorder::threads()).
Timeline build_timeline(const std::vector<ThreadBuffer*>& threads);

// Drops kernels and regions by name: keep those matching include (if set) and not exclude.
void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude);

}  // namespace kob
