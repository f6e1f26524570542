// One program thread's events matched on that thread's own stacks and folded into that thread's
// own figures, with no other thread's events in view and no global order by time (issue 42's
// per-thread engine; summary_engine.hpp drives it and joins the threads by id). What only another
// thread can complete leaves as a row: a parallel region (its team's implicit tasks run on other
// threads), an implicit task (its region's end, which another thread reports, may cut it), the
// sync regions inside an implicit task (cut with it). Everything else is summed here, in arrays
// indexed by dense ids (interned names, ompt kinds).
//
// The engine covers the Kokkos, MPI and OpenMP host events (locks and explicit tasks too) and the
// target offload records (joined in time order, OrderedRow) of a run; anything else (device
// tracing records, libomp's hidden-helper team, a lock released by another thread than the one
// that acquired it, a task stretch ended on another thread than the one it ran on, an odd hook
// order that the timeline builder would name as a problem) makes the pass decline, and the
// conversion takes the timeline builder's path instead (run_outputs.cpp). declined() says why.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/record/event.hpp"
#include "common/analysis/summary.hpp"
#include "common/timeline/timeline.hpp"

namespace kob::engine {

inline constexpr std::uint32_t kNone = UINT32_MAX;

// A Kokkos kernel row's figures on this thread: one per name, kind and space.
struct KernelPart {
  std::uint32_t name = 0;
  KernelKind kind = KernelKind::ParallelFor;
  std::uint32_t space = 0;     // devid >> 17
  std::uint32_t next = kNone;  // the next part of the same name
  std::uint32_t devid = 0;     // of the earliest call
  std::uint64_t calls = 0, total = 0, min = 0, max = 0, first_start = 0;
  bool kept = true;  // --include/--exclude keep its name (else its calls are only counted, as left out)
};

// A Kokkos profile region path on this thread: a node per (parent path, name).
struct RegionNode {
  std::uint32_t parent = kNone, name = 0, depth = 0;
  std::uint32_t first_child = kNone, next_sibling = kNone;
  std::uint64_t calls = 0, inclusive = 0, exclusive = 0;
  std::uint64_t first_end = UINT64_MAX;  // its first call's end: which node of a path the builder's row meets first
  bool kept = true;  // as KernelPart::kept: a region left out passes its kept regions to the kept one holding it
};

// Per-kind OpenMP figures (ompt_work_t, ompt_sync_region_t, ompt_dispatch_t are all below 32).
inline constexpr std::size_t kKinds = 32;
struct CountFigure {
  std::uint64_t count = 0, total = 0, wait = 0;
};

// An OpenMP construct outside any Kokkos kernel with a code address, as one thread saw it: its
// calls and times, resolved to a constructs-table row when the threads are joined.
struct ConstructHit {
  std::uint64_t codeptr = 0;
  std::uint32_t kind = 0;  // (Category << 16) | ompt kind (a mutex: its family)
  std::uint64_t calls = 0, total = 0, wait = 0;  // a mutex: calls are outer holds, wait its waits
  std::uint64_t first_end = 0, first_seq = 0;  // when its first call ended: the table keeps first-seen order
  std::uint64_t hold = 0, nested_holds = 0, failed_tries = 0;  // a mutex only (OmpConstructStats' fields)
};

// An explicit task created on this thread, for the join by task id (its runs may be on other
// threads): its creation site's row (codeptr 0: none, or in a Kokkos kernel) and time.
struct TaskCreateRow {
  std::uint64_t task_id = 0, time = 0, codeptr = 0, seq = 0;  // seq: as KernelTimes::seq
  std::uint32_t track = 0, flags = 0;                        // flags: ompt_task_flag_t
  // The create before it on this thread, with a row and no task run between: its site and the
  // time since (ConstructRows::create_gap when both sites are one row); 0: none.
  std::uint64_t prev_codeptr = 0, gap = 0;
};

// A stretch of an explicit task on this thread, from the task_schedule that started it to the one
// that ended it (status); taskwait: a taskwait-depend task's wait, from its creation on this
// thread to when it was met (it never runs). seq: as KernelTimes::seq (its end's order).
struct TaskStretchRow {
  static constexpr std::uint64_t kEndOfRun = UINT64_MAX;  // end: still running at a clean end (the last join sets it)
  std::uint64_t task_id = 0, start = 0, end = 0, seq = 0;
  std::uint32_t track = 0, status = 0;
  bool taskwait = false;
  bool discard = false;  // no stretch: a task cancelled where it was not running (status cancel)
};

// A mutex family's figures on this thread (OmpMutexStats' fields; summary_fold_constructs.hpp count_mutex).
struct MutexFigure {
  std::uint64_t holds = 0, nested_holds = 0, wait = 0, hold = 0, failed_tries = 0;
  bool seen = false;  // a span of the family ended here (the summary lists the family, even with all figures 0)
};

// A worksharing construct's time on this thread inside one implicit task (its region's team
// figures: summary_fold_constructs.hpp WorkPart): keyed by construct (type and code address) or,
// without a row of its own (in a kernel, no address), one for all such.
struct WorkPiece {
  std::uint16_t type = 0;
  bool has_row = false;
  bool loop = false;
  std::uint64_t codeptr = 0;
  std::uint64_t busy = 0;
};

// A sync region that ended inside a non-initial implicit task: folded when its region's end is
// known (it is cut there when it spans it: a worker's barrier that libomp reports ended late).
struct SyncPiece {
  std::uint16_t kind = 0;
  bool in_kernel = false;
  std::uint32_t part = kNone;  // the work piece whose implicit barrier it is (kind 8), among its task's; else kNone
  std::uint64_t codeptr = 0;
  std::uint64_t start = 0, end = 0, wait = 0, last_start = 0, last_end = 0;
};

// A parallel region, from the thread that began and ended it.
struct ParallelRow {
  std::uint64_t id = 0, kernel = 0, codeptr = 0, start = 0, end = 0;
  std::uint32_t track = 0, requested = 0, level = 0, flags = 0;
  std::uint32_t kernel_part = kNone;  // its kernel's KernelPart on the same thread (kernel != 0), or kOtherThread
  // Its own task's one work construct (a `parallel for`'s loop), when own_task: the task's part
  // (WorkPiece's fields: own_work_*, its type and flags in what was padding), its row's share taken
  // by the join (Engine::take_own_task); a worker's comes as a row.
  std::uint16_t own_work_type = 0;
  bool own_work = false, own_work_row = false;
  // A region whose kernel is open on another thread (a team of an offloaded target region's league,
  // on a thread of its own): the join finds the kernel by id, from the target region's begin.
  static constexpr std::uint32_t kOtherThread = kNone - 1;
  std::uint64_t seq = 0;              // as KernelTimes::seq; kUnended: still open at the end (unended())
  // The implicit task this thread ran in the region itself, when it is folded here (its own
  // region's end cannot cut it; at most one work construct, no explicit tasks): its figures.
  bool own_task = false;
  bool kernel_inside = false;  // outside kernels: a Kokkos kernel ran during it (set by the join)
  // libomp's hidden-helper team's region (it runs `target nowait` tasks): opened by the runtime
  // itself, outermost, never ended before the files are written; left out of the figures.
  bool hidden = false;
  bool own_work_loop = false;
  std::uint32_t own_team_size = 0;
  std::uint64_t own_dur = 0, own_wait = 0;
  std::uint64_t own_work_busy = 0, own_work_codeptr = 0;
  // Still open at the end of the thread's events (EpochRows::unended_parallels): it ends at its
  // thread's last event (end) in a run cut short, else at the end of the run (the join's); its team
  // is the implicit tasks begun in it, and it arrives after every span that ended
  // (OmpMatcher::finish). A seq no event has, not a field of its own: a flag more made each row's
  // copies dearer (5 Ir a kernel, callgrind).
  static constexpr std::uint64_t kUnended = UINT64_MAX;
  bool unended() const { return seq == kUnended; }
};

// A non-initial implicit task. open: libomp never reported its end (a worker's last region):
// it ends where its region ends, with the waits and syncs still open in it (waits, open_syncs);
// in a region still open at the end (ParallelRow::unended()), at its thread's last event (end, set
// by ThreadFold::finish) in a run cut short, else at the end of the run.
struct ImplicitRow {
  std::uint64_t parallel_id = 0, start = 0, end = 0, wait = 0, last_start = 0, last_end = 0;
  std::uint32_t track = 0, team_size = 0, level = 0;
  std::uint32_t pieces = 0, piece_count = 0;  // its SyncPieces (in nested_pieces for a nested_implicits row)
  std::uint32_t parts = 0, part_count = 0;    // its WorkPieces (likewise nested_parts)
  bool open = false;
  bool joined = false;  // the join took it with its region's row at once (Engine::join_pair)
  // The explicit tasks this thread ran or created since its last implicit task ended
  // (SummaryFold::omp_implicit_task): their run time when they ended inside this task, and
  // whether any were created.
  std::uint64_t task_work = 0;
  bool created_tasks = false;
  std::uint32_t open_waits = 0, open_wait_count = 0;  // ThreadFold::open_waits_ (open only)
  std::uint32_t open_syncs = 0, open_sync_count = 0;  // ThreadFold::open_syncs_ (open only)
};

// A work construct (a loop, a masked region) still open when its thread's events ended, inside
// its implicit task: it ends at the thread's last event in a run cut short (end), else at the end
// of the run (the last join's), as OmpMatcher::finish closes it, with a problem line; silently on
// a thread of libomp's hidden-helper team, which outlives the run (quiet; close_all_quietly).
// codeptr: 0 where it has no constructs row; part: its piece among its implicit task's parts (its
// busy time added then).
struct UnendedWork {
  std::uint16_t type = 0;
  bool quiet = false;
  std::uint64_t codeptr = 0, start = 0, end = 0, parallel_id = 0;
  std::uint32_t part = kNone;
};

// A wait or sync still open when the thread's events ended (inside an open implicit task).
struct OpenWait {
  std::uint16_t kind = 0;
  std::uint64_t start = 0;
};
struct OpenSync {
  std::uint16_t kind = 0;
  bool in_kernel = false;
  std::uint64_t codeptr = 0, start = 0, wait = 0;
};

// A fact whose meaning depends on the order of all threads' events: a Kokkos allocation or free
// (the memory levels), a profile section's create, start, stop or destroy (a section may start on
// one thread and stop on another), a target offload record (targets, data ops and submits pair
// across threads, data ops wait for the allocation or deep copy they belong to: the builder's
// TargetMatcher takes them in time order) and a deep copy's end (its data ops are credited to it).
// The join merges them by time.
struct OrderedRow {
  enum Kind : std::uint8_t { Alloc, Dealloc, SectionCreate, SectionStart, SectionStop, SectionDestroy, Target, DeepCopy };
  std::uint64_t time = 0, ptr = 0, bytes = 0, seq = 0;  // DeepCopy: ptr its id
  std::uint32_t track = 0, space = 0, name = 0;  // space: a section's id; DeepCopy: the destination's
  Kind kind = Alloc;
  std::uint32_t src_space = 0, src_name = 0;  // DeepCopy
  std::uint64_t start = 0;                    // DeepCopy
  std::uint32_t kernel_part = kNone;          // Target: a target begin's kernel's part, when open on its thread
  Event event[2] = {};                        // Target: the record's cells
};

// A kernel's times, for "did a Kokkos kernel run during this parallel region" (the constructs table).
struct KernelTimes {
  std::uint64_t end = 0, start = 0;
  std::uint32_t track = 0;
  std::uint64_t seq = 0;  // the thread's event count at its end: ties on one thread in record order
};

// A construct hit first made in an epoch: what the join needs to give it a row (its first call's
// end and place, for the table's first-seen order).
struct HitSeen {
  std::uint64_t codeptr = 0, first_end = 0, first_seq = 0;
  std::uint32_t kind = 0;  // as ConstructHit::kind
};

// A kernel part first made in an epoch: its key, for the join's OpenMP figures per kernel.
struct KernelSeen {
  std::uint32_t name = 0;
  KernelKind kind = KernelKind::ParallelFor;
  std::uint32_t space = 0;
  bool kept = true;  // KernelPart::kept: a region in a kernel left out adds to no kernel row
};

// One thread's rows of one epoch, handed from its fold to the join (ThreadFold::hand_over): the
// fold goes on with the next epoch, on another core, while the join reads and marks these.
struct EpochRows {
  std::uint32_t track = 0;
  std::vector<ParallelRow> parallels;
  std::vector<ParallelRow> unended_parallels;  // the last epoch's only (ThreadFold::finish): apart, out of the joins' loops
  std::vector<ImplicitRow> implicits;
  std::vector<SyncPiece> pieces;  // of the implicit rows (ImplicitRow::pieces indexes here)
  std::vector<WorkPiece> parts;
  std::vector<ImplicitRow> nested_implicits;  // a nested region's (level != 0): pieces and parts in the two below
  std::vector<SyncPiece> nested_pieces;
  std::vector<WorkPiece> nested_parts;
  std::vector<std::uint64_t> open_tasks;  // the parallel ids of the implicit tasks still open on the thread
  bool targets = false;  // target records came so far on the thread
  // Rows place_constructs looks at may be among parallels (a region outside kernels) or pieces (an
  // explicit sync region outside kernels): when false, it skips their walk.
  bool outside_parallels = false, outside_syncs = false;
  std::vector<OrderedRow> ordered;
  std::vector<KernelTimes> kernel_times;
  std::vector<OpenWait> open_waits;  // the last epoch's only (ThreadFold::finish)
  std::vector<OpenSync> open_syncs;
  std::vector<UnendedWork> unended_works;  // the last epoch's only (ThreadFold::finish)
  std::vector<HitSeen> hits;
  std::vector<KernelSeen> kernels;  // ThreadFold::kernels' new parts, in order
  std::vector<TaskCreateRow> task_creates;
  std::vector<TaskStretchRow> task_stretches;
};

class ThreadFold {
 public:
  // track: the thread's index among the run's threads; with_rows: the constructs table is made
  // (a source resolver is set), so constructs outside kernels are told apart by address.
  // keep_names: by interned name id, whether --include/--exclude keep a kernel or region of that
  // name (nullptr: all kept); read only, shared by the threads' folds.
  ThreadFold(std::uint32_t track, int omp_thread_type, CodeRange omp_runtime_code, bool with_rows,
             const std::vector<std::uint8_t>* keep_names = nullptr);

  // The thread's next events, in order (a decoded chunk, EventDecoder::SyncSteps::InBegin).
  void events(const Event* begin, const Event* end);
  // As events, for a chunk that holds device tracing records (EventChunk::device_records): those
  // are taken apart (device_record), the others through events.
  void events_with_devices(const Event* begin, const Event* end);
  // The thread's events are over: what is still open becomes the rows the join needs, or the
  // pass declines. cut: the run was cut short (no clean end): the Kokkos spans and MPI calls
  // still open end at the thread's last event (close_open); else the engine ends them at the end
  // of the run, once every thread is folded. lost_ends: events were dropped in the run: the
  // Kokkos spans and MPI calls still open are discarded instead (their ends may be lost).
  void finish(bool cut = false, bool lost_ends = false);
  // The file lost blocks (damage, a write cut short): orders that only lost records explain decline.
  void set_damaged(bool damaged) { damaged_ = damaged; }
  void close_open(std::uint64_t end, bool cut);
  void close_last_barriers(std::uint64_t end, bool cut);
  bool last_barriers(bool cut, bool lost_ends);

  bool declined() const { return !why_.empty(); }
  const std::string& why() const { return why_; }

  // The epoch's rows and merge-ordered facts, made here and handed to the join after each epoch.
  std::vector<ParallelRow> parallels;
  std::vector<ParallelRow> unended_parallels;
  std::vector<ImplicitRow> implicits;
  std::vector<SyncPiece> pieces;
  std::vector<WorkPiece> parts;
  // A nested region's implicit task (ImplicitRow::level != 0) ends inside its parent, whose pieces
  // and parts are the vectors' tail from its own start: the nested one's row, pieces and parts
  // move apart when it ends (nested_row).
  std::vector<ImplicitRow> nested_implicits;
  std::vector<SyncPiece> nested_pieces;
  std::vector<WorkPiece> nested_parts;
  std::vector<OrderedRow> ordered;
  std::vector<KernelTimes> kernel_times;
  std::vector<OpenWait> open_waits;
  std::vector<OpenSync> open_syncs;
  std::vector<UnendedWork> unended_works;
  std::vector<TaskCreateRow> task_creates;
  std::vector<TaskStretchRow> task_stretches;
  // Moves the epoch's rows into out (what out held is dropped, its memory reused), with the hits
  // and kernel parts first made since the last hand-over. The pieces and parts of an implicit task
  // still open stay here, renumbered from 0, unless last (after finish(): everything goes).
  void hand_over(EpochRows& out, bool last);

  // The thread's own figures, summed over the run.
  std::uint32_t track = 0;
  int omp_thread_type = 0;
  std::uint64_t host_records = 0, omp_records = 0, last_ns = 0;
  std::uint64_t t_min = UINT64_MAX, t_max = 0;
  std::uint64_t tool_flushes = 0, tool_flush_ns = 0;
  std::uint64_t wait_total = 0;  // sync-region waits (Track::omp_wait_ns), before the cuts
  std::vector<KernelPart> kernels;
  std::vector<RegionNode> regions;
  std::map<std::uint32_t, NamedStats> fences;  // by name
  std::map<std::uint32_t, NamedStats> mpi_calls;  // by call (record/mpi_calls.hpp)
  std::map<std::pair<std::uint32_t, std::uint32_t>, CopyStats> copies;  // dst space, src space
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>>
      copy_sites;  // (dst name, src name, dst space, src space, bytes) -> calls, ns (first-seen order: copy_site_order)
  std::uint64_t profile_events = 0, dual_view_syncs = 0, dual_view_modifies = 0;
  std::uint64_t initial_tasks = 0;
  // A run cut short: the spans closed at the thread's last event (the summary's cut_spans).
  std::uint64_t cut_spans = 0;
  // The Kokkos spans and MPI calls close_open ended, by kind (each a problem line).
  struct Unended {
    std::uint64_t kernels = 0, fences = 0, copies = 0, mpi = 0, regions = 0;
  } unended, discarded;  // discarded: by finish, events having been dropped (no regions)
  std::uint64_t implicit_tasks = 0, busy = 0;  // the implicit tasks folded here (ParallelRow::own_task)
  std::array<CountFigure, kKinds> work{}, sync{}, dispatch{};
  std::uint64_t dependences = 0, tasks_with_dependences = 0, task_dependences = 0, lock_inits = 0, lock_destroys = 0, cancels = 0,
                flushes = 0, errors_warning = 0, errors_fatal = 0;
  std::vector<ConstructHit> hits;  // outside kernels: works, syncs (not those in a worker's implicit task) and mutexes
  std::array<MutexFigure, kKinds> mutex{};  // by ompt_mutex_t family (omp_names::mutex_family)
  std::uint64_t tasks_created = 0, task_stretch_count = 0, tasks_completed = 0;  // explicit tasks (stretches: not taskwait waits)
  std::uint64_t unended_tasks = 0;  // stretches still running at the end (ThreadFold::finish)
  bool outside_parallels_ = false, outside_syncs_ = false;  // EpochRows' flags, made as the rows are
  std::uint64_t target_records = 0;  // handed on as OrderedRow::Target (the builder counts them apart from omp_records)
  // The thread opened libomp's hidden-helper team's region (ParallelRow::hidden): a thread of that
  // team, left out of the figures (the join finds the team's other threads by their tasks).
  bool hidden_helper = false;
  std::uint64_t device_records = 0;  // device tracing records, handed on as OrderedRow::Target too (Track::device_records)

  // Every call's time (ns) by kernel part, region node and construct hit (the indexes above), kept
  // only after keep_calls(): kob diff's noise model takes each row's calls in any order
  // (CallTimes); the summary takes the sums above.
  void keep_calls() { keep_calls_ = true; }
  std::vector<std::vector<std::uint64_t>> kernel_calls, region_calls, hit_calls;

 private:
  struct OpenKernel {
    std::uint64_t id, start;
    std::uint32_t part, devid;
  };
  struct OpenFence {
    std::uint64_t id, start;
    std::uint32_t name;
  };
  struct OpenCopy {
    std::uint64_t id, start, bytes;
    std::uint32_t dst_space, dst_name, src_space, src_name;
  };
  struct OpenMpi {
    std::uint16_t call;
    std::uint64_t start;
  };
  struct OpenRegion {
    std::uint32_t node;
    std::uint64_t start, children;
  };
  struct OpenParallel {
    ParallelRow row;
  };
  struct OpenImplicit {
    std::uint64_t parallel_id, start, wait, last_start, last_end;
    std::uint32_t thread_num, team_size, level;
    bool initial;
    bool own;  // this thread began the region (its task is not cut)
    std::uint32_t pieces, parts;  // where its pieces and parts begin in the vectors
  };
  struct OpenWork {
    std::uint16_t type;
    std::uint64_t parallel_id, kernel, codeptr, start;
  };
  struct OpenSyncRegion {
    std::uint16_t kind;
    std::uint64_t parallel_id, kernel, codeptr, start, wait, last_start, last_end;
  };
  struct Wait {
    std::uint16_t kind;
    std::uint64_t start;
  };
  struct LastWork {
    std::uint32_t part = kNone;
    std::uint64_t parallel_id = 0, end = 0;
  };
  // A mutex being acquired, and one held (OmpMatcher's Acquire and hold spans).
  struct OpenAcquire {
    std::uint16_t family;
    bool test;  // omp_test_lock / omp_test_nest_lock: a later acquire means this try failed
    std::uint64_t wait_id, kernel, codeptr, start;
  };
  struct OpenHold {
    std::uint16_t family;
    bool nested;  // a nest lock set again by the thread that holds it
    std::uint64_t wait_id, kernel, codeptr, start;
  };
  struct RunningTask {
    std::uint64_t task_id, start;
  };

  void decline(const char* why);
  [[gnu::noinline]] bool past_lost_kernel_end(std::uint64_t kernel);
  enum class Ignored : std::uint8_t { kImplicitEnd, kParallelEnd };
  [[gnu::noinline]] void ignore(Ignored what, std::uint64_t id = 0);
  void kernel_begin(const Event& e);
  void kernel_end(const Event& e);
  std::size_t open_kernel(std::uint64_t id) const;
  [[gnu::noinline]] bool take_open_kernel(std::uint64_t id, OpenKernel& k);
  [[gnu::noinline]] bool kernel_part_below(ParallelRow& r);
  void region_push(const Event& e);
  void region_pop(const Event& e);
  void deep_copy_end(const Event& e);
  // A span's end at `end` into the figures (from its end event, or close_open).
  void kernel_figures(const OpenKernel& k, std::uint64_t d);
  void end_region(std::uint64_t end);  // the innermost open region
  void end_copy(const OpenCopy& c, std::uint64_t end);
  static void end_named(NamedStats& st, std::uint64_t start, std::uint64_t end);
  void omp_event(const Event& e);
  [[gnu::noinline]] void target_event(const Event& e);
  void device_record(const Event& e);
  OrderedRow& target_row(const Event& e);
  [[gnu::noinline]] void nested_row(std::uint64_t end, std::uint64_t task_work, bool created_tasks);
  [[gnu::noinline]] void own_row(std::uint64_t end);
  void take_own_work(ParallelRow& p, const WorkPiece& w);
  void fill_row(ImplicitRow& r, const OpenImplicit& t, std::uint64_t end, std::uint64_t task_work, bool created_tasks) const;
  void rare_host_event(const Event& e, Ev type, std::uint64_t ns);
  const Event* parallel_begin(const Event* at, const Event* end, std::uint64_t& lo, std::uint64_t& hi, std::uint64_t& taken);
  void parallel_end(const Event& e);
  void implicit_begin(const Event& e);
  void implicit_end(const Event& e);
  const Event* implicit_whole(const Event* e, const Event* end, std::uint64_t& lo, std::uint64_t& hi, std::uint64_t& taken,
                              ParallelRow* region = nullptr);
  bool work_whole_fits(const Event* wb, const Event* wx, std::uint64_t pid, unsigned dispatch_kinds) const;
  std::uint64_t take_work_whole(const Event* wb, const Event* wx, std::uint64_t pid, std::uint64_t& lo, std::uint64_t& hi);
  template <bool kWork>
  [[gnu::always_inline]] const Event* implicit_whole(const Event* e, const Event* s, const Event* end, std::uint64_t& lo, std::uint64_t& hi, std::uint64_t& taken,
                              ParallelRow* region);
  void work_end(const Event& e);
  void sync_end(const Event& e);
  const Event* sync_begin(const Event* e, const Event* end, std::uint64_t& steps);
  void sync_wait(OpenSyncRegion& y, std::uint64_t ws, std::uint64_t we);
  std::uint64_t thread_wait(std::uint64_t start, std::uint64_t end);
  std::uint64_t partial_sync(const Event& begin, const OpenSyncRegion& y, std::uint64_t ws, std::uint64_t we, std::uint64_t ye);
  void close_sync(const OpenSyncRegion& y, std::uint64_t end);
  void add_piece(const OpenSyncRegion& y, std::uint32_t part, std::uint64_t end);
  void fold_sync(std::uint16_t kind, bool in_kernel, std::uint64_t codeptr, std::uint64_t dur, std::uint64_t wait, std::uint64_t end);
  void wait_end(const Event& e);
  void add_wait(std::uint16_t kind, std::uint64_t start, std::uint64_t end);
  void hit(std::uint32_t kind, std::uint64_t codeptr, std::uint64_t dur, std::uint64_t wait, std::uint64_t end);
  // The hit of (kind, codeptr), made (first call ending at `end`, the thread's `seq`) when new.
  std::uint32_t find_hit(std::uint32_t kind, std::uint64_t codeptr, std::uint64_t end, std::uint64_t seq);
  void mutex_acquire(const Event& e);
  void mutex_acquired(const Event& e);
  void mutex_released(const Event& e);
  void nest_lock(const Event& e);
  void task_create(const Event& e);
  void task_schedule(const Event& e);
  void task_prior(std::uint64_t ns, std::uint64_t prior, std::uint32_t status, std::uint64_t next);
  void task_stretch(const TaskStretchRow& k);
  // The explicit tasks' part of an implicit task that ends (its start given): ImplicitRow's task
  // figures, the thread's counts started again.
  void take_task_work(std::uint64_t start, std::uint64_t& work, bool& created);
  // A wait for a mutex (hold false; failed: a test that did not get it) or a hold ended: counted
  // for its family and its site's row. end and seq: when it was known (its row's first-seen order).
  void mutex_span(std::uint16_t family, std::uint64_t kernel, std::uint64_t codeptr, std::uint64_t dur, bool hold, bool nested,
                  bool failed, std::uint64_t end, std::uint64_t seq);
  // The order of this thread's facts among themselves: the current event's cell among all the
  // thread's cells so far (seq()), set per event as cur_ (a store, not a count kept in memory).
  const Event* cur_ = nullptr;
  const Event* cells_ = nullptr;  // this chunk's first cell
  std::uint64_t seq_base_ = 0;    // the cells of the chunks before it
  std::uint64_t seq() const { return seq_base_ + static_cast<std::uint64_t>(cur_ - cells_) + 1; }
  std::uint64_t flush_end_ = 0;  // the latest end of the thread's own flushes (the run's last time)
  // The innermost open non-initial implicit task (nullptr: none), and the outermost.
  OpenImplicit* worker_task();
  bool open_works(bool cut);
  void finish_mutexes(bool cut, bool lost_ends);
  void tasks_in_work(std::uint64_t start);
  std::uint32_t work_part(const OpenImplicit& t, std::uint16_t type, bool has_row, std::uint64_t codeptr);
  [[gnu::noinline]] bool hidden_region(ParallelRow& r);
  OpenImplicit* outer_task();

  CodeRange runtime_code_;
  bool with_rows_ = false;
  const std::vector<std::uint8_t>* keep_names_ = nullptr;
  bool kept(std::uint32_t name);  // keep_names_'s answer (a name past its end: declined)
  bool keep_calls_ = false;
  // A call's time under index i of calls (out of line: only kob diff keeps them).
  static void add_call(std::vector<std::vector<std::uint64_t>>& calls, std::uint32_t i, std::uint64_t ns);
  std::string why_;
  std::vector<std::uint32_t> kernel_by_name_;  // name id -> first KernelPart
  std::vector<OpenKernel> open_kernels_;
  std::vector<OpenFence> open_fences_;
  std::vector<OpenCopy> open_copies_;
  std::vector<OpenRegion> open_regions_;
  std::vector<OpenMpi> open_mpi_;
  std::vector<OpenParallel> open_parallels_;
  std::vector<OpenImplicit> implicit_;
  std::vector<OpenWork> work_;
  std::vector<OpenSyncRegion> sync_;
  std::vector<Wait> waits_;
  LastWork last_work_;
  std::uint32_t open_non_initial_ = 0;
  std::vector<OpenAcquire> acquiring_;
  std::vector<OpenHold> holds_;
  std::uint64_t lock_wait_ = 0;  // the waits for mutexes with a row since this thread's last outer hold (a call's time)
  // Explicit tasks (SummaryFold's OmpTrackAcc): the tasks running here, taskwait-depend tasks
  // created here and not met yet, the run time since the last implicit task ended (and of the
  // latest stretches, which a work construct holding them takes back), creates since then, and
  // the site of the last create (a create right after one at the same site: its cost, create_gap).
  std::vector<RunningTask> running_;
  struct OpenMutexSpan {  // an acquire (a wait) or a hold open at a clean end: close_open_mutexes
    std::uint16_t family;
    bool hold, nested;
    std::uint64_t kernel, codeptr, start, seq;
  };
  std::vector<OpenMutexSpan> open_mutexes_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> taskwait_creates_;  // task id, creation time
  std::vector<std::uint64_t> early_fulfilled_;  // detached tasks fulfilled inside their body, until their `complete`
  std::uint64_t task_run_ = 0, task_run_end_ = 0, recent_run_ = 0, recent_end_ = 0, creates_since_ = 0;
  std::uint64_t last_create_codeptr_ = 0, last_create_time_ = 0;
  bool tasks_seen_ = false;  // an explicit task was created or ran here: implicit tasks take their part
  // Construct hits by (kind, codeptr): open addressing into hits.
  std::vector<std::uint32_t> hit_slots_;
  std::uint32_t last_hit_ = kNone;  // the hit added to last
  std::size_t handed_hits_ = 0, handed_kernels_ = 0;  // hits and kernels already in a hand-over
  bool damaged_ = false;
  // Kernel name ids at or past the trace's name table and this many more decline (kernel_by_name_
  // is indexed by id).
  static constexpr std::size_t kNamesPastTable = std::size_t{1} << 16;

 public:
  // Odd orders the builder ignores, each a problem line: ends whose begin the thread does not have
  // (lost with a damaged file's blocks), a mutex asked for twice. Last: out of the hot members' way.
  std::uint64_t implicit_ends_unbegun = 0, parallel_ends_unbegun = 0, region_pops_unpushed = 0, mutex_acquired_unasked = 0,
                mutex_asked_twice = 0;
  std::vector<std::uint64_t> unbegun_parallel_ends;  // their parallel ids
  // Mutex holds and acquires (waits) still open at the end (finish): ended at the thread's last
  // event after a run cut short, at the end of the run after a clean end (close_open_mutexes), or
  // discarded (events lost), each a problem line.
  std::uint64_t holds_cut = 0, holds_discarded = 0, acquires_unended = 0, acquires_discarded = 0;
  // After a clean end, once the end of the run is known (the engine's close_unended): the mutex
  // acquires and holds still open end there, as the builder's finish ends them.
  void close_open_mutexes(std::uint64_t end);
};

}  // namespace kob::engine
