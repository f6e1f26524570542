// The run, reconstructed from all threads' records at the end: matched begin/end pairs with
// nanosecond times, region paths, memory levels. Writers and the summary read only this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"
#include "common/timeline/thread_source.hpp"

namespace kob {

struct Track {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  int omp_thread_type = 0;
  std::uint64_t omp_wait_ns = 0;  // all OpenMP sync-region waits of this thread, inside a sync region or not
  int omp_proc = -1, omp_place = -1;  // where OMPT placed the thread at thread_begin; -1 unknown
  std::uint64_t host_records = 0;    // records about this thread's own work
  std::uint64_t device_records = 0;  // device tracing records this thread only delivered
  std::uint64_t dropped = 0;         // events lost (the stretches known are in Timeline::lost; the rest after last_ns)
  std::uint64_t last_ns = 0;         // time of its last recorded host event
  std::uint64_t tool_flushes = 0;    // copies of its own full ring slots the thread made (the writer was behind)
  std::uint64_t tool_flush_ns = 0;   // their time in all
  bool hidden_helper = false;        // a thread of libomp's hidden-helper team (runs `target nowait`)
  std::uint32_t hidden_helper_num = 0;  // its thread number in that team
  bool device_only() const { return host_records == 0 && device_records > 0; }
};

struct Interval {
  std::uint64_t start = 0;  // ns on the CLOCK_MONOTONIC_RAW time line
  std::uint64_t end = 0;
  std::uint32_t track = 0;  // index into Timeline::tracks
  bool cut = false;         // still open when the run ended without a clean exit: ends at its thread's last event
  std::uint64_t dur() const { return end - start; }
};

// A stretch of one thread's events that never reached the raw trace (whole chunks).
struct LostSpan {
  std::uint32_t track = 0;
  std::uint64_t start = 0, end = 0;  // ns: the first and last lost event
  std::uint64_t events = 0;
  LossReason reason = LossReason::Unknown;
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

// A blocking MPI call, from the PMPI layer: begin and end on its thread.
struct MpiSpan : Interval {
  std::uint32_t call = 0;  // kob_mpi_send, ... (record/mpi_calls.hpp; kob_mpi_call_name)
  std::uint64_t bytes = 0;  // sent or received by this rank (collectives: its own buffer's)
  std::int32_t peer = -1;   // the other rank (Send/Recv), the root (Bcast, Reduce, Gather, Scatter); -1 none
};

// The tool's own work on a program thread: it copied its full ring slots to the raw trace itself,
// the writer thread being behind (no core for it). What the tool cost the thread, where.
struct ToolFlushSpan : Interval {
  std::uint32_t records = 0;  // records copied
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
  std::uint64_t id = 0;           // allocations: 1, 2, ... in time order (the trace's kokkos.alloc id); 0 for frees
  // A free: bytes no recorded allocation covers, and whether no allocation of that block was
  // recorded at all (allocated before the tool was loaded); else a free larger than its allocation.
  std::uint64_t unmatched = 0;
  bool unmatched_block = false;
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
  std::uint64_t codeptr = 0;    // the construct's code address as the runtime reported it (codeptr_ra; 0: none)
  bool hidden_helper = false;   // the region libomp's hidden-helper team runs in (opened by the runtime itself)
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
  std::uint64_t codeptr = 0;  // as on OmpParallelSpan
};

struct OmpSyncSpan : Interval {
  std::uint16_t kind = 0;  // ompt_sync_region_t
  std::uint64_t parallel_id = 0, kernel = 0, task_id = 0;
  std::uint64_t wait_ns = 0;  // waits of the same kind nested in it on its thread
  std::uint64_t codeptr = 0;  // as on OmpParallelSpan
};

struct OmpTaskCreate {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  std::uint64_t task_id = 0, kernel = 0;
  std::uint32_t flags = 0;
  bool has_dependences = false;
  std::uint64_t codeptr = 0;  // the creation site, as on OmpParallelSpan
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
  bool failed = false;     // wait only: an omp_test_lock / omp_test_nest_lock that did not get it (start == end)
  std::uint64_t wait_id = 0, kernel = 0;
  std::uint64_t codeptr = 0;  // where it was acquired (a hold: its acquire's), as on OmpParallelSpan
};

// Every other OpenMP event, shown as an instant: dispatch, dependences, task dependence, lock
// init/destroy, cancel, flush, control tool, error; and a detached task's fulfill (type
// OmpTaskSchedule: its prior status and prior task id). A generic carrier of the record's slots
// that these types use, copied as they are (not the whole record: 64 bytes more per instant, and
// a run may have millions of dispatches): read them through record() and the type's fields
// (common/record/record_fields.hpp).
struct OmpInstant {
  std::uint64_t time = 0;
  std::uint32_t track = 0;
  Ev type = Ev::None;
  std::uint16_t sub = 0;
  std::uint32_t a = 0;
  std::uint64_t u0 = 0, u2 = 0, kernel = 0;
  std::uint64_t codeptr = 0;  // as on OmpParallelSpan (lock init, cancel, flush, control tool, error)

  // The carried slots of r; the other ones no instant type uses.
  template <class R>
  void carry(const R& r) {  // a Record or an Event
    type = r.type;
    fields::carry_instant_slots(r, *this);
  }
  // The record carried (its other slots 0), for its type's fields.
  Record record() const { return fields::instant_record(*this, type); }
};

// Target offload (host side). Device numbers: the host is -1 (whatever number the runtime used
// for it, see host_device below); others as the runtime reported them.
constexpr int kHostDevice = -1;

struct OmpTargetSpan : Interval {  // on the thread that began it
  std::uint16_t kind = 0;          // ompt_target_t
  int device = 0;
  std::uint64_t id = 0, kernel = 0, deep_copy = 0;  // target id; Kokkos kernel / deep copy (0: none)
  std::uint64_t codeptr = 0;                        // as on OmpParallelSpan
};

// A data operation: begin..end with the EMI callbacks, a point (start == end) with the 5.0 ones.
struct OmpDataOpSpan : Interval {
  std::uint16_t optype = 0;  // ompt_target_data_op_t
  int src_device = 0, dst_device = 0;
  std::uint64_t host_op_id = 0, kernel = 0, bytes = 0, target_id = 0, deep_copy = 0;
  std::uint64_t address = 0;       // destination address (the freed block for a delete)
  std::uint64_t kokkos_alloc = 0;  // id of the Kokkos allocation at that address (MemoryEvent::id), 0: none
  bool point = false;
  // The device the operation works for: the destination, or the source when that is the host.
  int device() const { return dst_device != kHostDevice ? dst_device : src_device; }
};

struct OmpSubmitSpan : Interval {  // begin..end (EMI) or a point (5.0)
  std::uint32_t requested_teams = 0;
  std::uint64_t host_op_id = 0, kernel = 0, target_id = 0;
  bool point = false;
};

struct OmpDevice {
  int num = 0;
  std::uint32_t type = 0;       // interned type string from device_initialize; 0: never initialised
  bool initialised = false;     // a device_initialize named it
  bool traced = false;          // its events come through the device tracing interface
  std::uint64_t init_time = 0, finalize_time = 0;  // finalize_time 0: no device_finalize
};

struct OmpDeviceLoad {
  std::uint64_t time = 0;
  std::uint32_t track = 0;  // the host thread that reported it
  int device = 0;
  bool unload = false;
  std::uint32_t file = 0;   // interned; InternTable::kNullName when the runtime gave none
  std::uint64_t host_addr = 0, device_addr = 0, bytes = 0, module_id = 0;
};

// One record of the device tracing interface, on its device's track; times are host ns.
struct OmpDeviceOp : Interval {
  std::uint16_t record_type = 0;  // ompt_callbacks_t of the record
  int device = 0;
  std::uint64_t host_op_id = 0, target_id = 0;
  std::uint64_t value = 0;        // bytes (data ops) or requested teams (submits)
  std::uint64_t op_kind = 0;      // ompt_target_data_op_t / ompt_target_t of the record
  bool point = false;             // no end time: start == end
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
  // Target offload, spans sorted by start; devices by number.
  std::vector<OmpTargetSpan> omp_targets;
  std::vector<OmpDataOpSpan> omp_data_ops;
  std::vector<OmpSubmitSpan> omp_submits;
  std::vector<OmpDevice> omp_devices;
  std::vector<OmpDeviceLoad> omp_device_loads;  // loads and unloads, by time
  std::vector<OmpDeviceOp> omp_device_ops;
  std::vector<MpiSpan> mpi_calls;  // sorted by start
  std::vector<ToolFlushSpan> tool_flushes;  // sorted by start
  std::uint64_t omp_target_records = 0;  // target and device records read (0: no target section)
  std::uint64_t omp_records = 0;          // OpenMP records read (0: OMPT recorded nothing)
  std::uint64_t omp_tasks_completed = 0;  // explicit tasks that left a thread as complete or fulfilled
  std::uint64_t omp_tasks_cancelled = 0;  // explicit tasks that ended as ompt_task_cancel
  std::uint64_t omp_tasks_discarded = 0;  // of those, the ones that never started (cancelled before running)
  std::uint64_t t0 = 0;        // earliest event, ns
  std::uint64_t t_end = 0;     // latest event, ns
  std::uint64_t dropped = 0;   // events lost (sum over the tracks)
  std::vector<LostSpan> lost;  // the stretches of lost events that are known, by track then time
  std::uint64_t run_end = 0;   // ns when the outputs were made (the end of the run); 0: unknown
  bool cut_short = false;      // the run ended without a clean exit (a raw trace without END)
  std::uint64_t cut_spans = 0; // spans still open then, cut at their thread's last event (Interval::cut)
  std::vector<std::string> problems;  // odd hook orders, unknown ids...: one line each
  std::uint64_t filtered_kernels = 0, filtered_regions = 0;
};

// The OpenMP runtime's own code, [start, end): a parallel region begun there is the runtime's
// hidden-helper team's. The recording process finds it (the OMPT start-up) and the raw trace
// carries it as the fact `kob/omp_runtime_code` ("START-END", hex, END excluded; "" none), so the
// library at exit and kob convert read it from the same place. Empty when unknown or when the
// runtime is linked into the executable itself.
struct CodeRange {
  std::uint64_t start = 0, end = 0;
  bool contains(std::uint64_t address) const { return address != 0 && start <= address && address < end; }
  bool empty() const { return start >= end; }
};
// The fact's text as a range; empty when malformed.
CodeRange parse_code_range(const std::string& text);
std::string format_code_range(const CodeRange& range);

// Reads the given threads' records (a raw trace's threads, raw_reader.hpp), ticks to ns through
// clock::to_ns. initial_device_num: the host's device number as given to the OMPT initializer (-1:
// unknown). ended_cleanly false: the run was cut short (crash, signal, _exit); spans still open are
// cut at their own thread's last event instead of running to the end of the run. omp_runtime_code:
// the OpenMP runtime's code (its hidden-helper team), as the run's facts carry it.
Timeline build_timeline(const std::vector<const ThreadSource*>& threads, int initial_device_num = -1, bool ended_cleanly = true,
                        CodeRange omp_runtime_code = {});

// Whether a device number reported by a target callback is the host: -1; else a number that no
// device_initialize named, when some device was initialised (libomptarget numbers the host after
// its devices); else, with no device initialised, the initial device number. (libomp 19 gives the
// initializer 0, the number of the first device, so that number alone cannot decide.)
bool host_device(int device_num, int initial_device_num, const std::vector<int>& initialised_devices);


// Drops kernels and regions by name: keep those matching include (if set) and not exclude.
void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude);

}  // namespace kob
