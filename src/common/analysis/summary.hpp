// End-of-run figures computed from the timeline; printed as text and written as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/timeline/timeline.hpp"

namespace kob {

// A kernel's device as what ran it where Kokkos named another (a View initialization kernel that
// opened OpenMP parallel regions under Kokkos 3, which reports device id 0, Serial, for it).
inline constexpr std::string_view kInferredOpenMP = "OpenMP (inferred)";

struct KernelStats {
  std::string name;
  std::string kind;
  std::string device;      // the execution space it ran on ("OpenMP", "Serial", "OpenMP (inferred)"...)
  std::uint32_t space = 0;  // the device id's type and device number: a row per name, kind and space
  std::uint64_t calls = 0, total = 0, min = 0, max = 0;
  bool partial = false;  // launched on a thread that dropped events: its later calls are missing
  std::uint64_t mean() const { return calls ? total / calls : 0; }
};

struct RegionStats {
  std::string path, name;
  std::uint32_t depth = 0;
  std::uint64_t calls = 0;
  std::uint64_t inclusive = 0;  // ns in the region
  std::uint64_t exclusive = 0;  // inclusive minus time in its child regions
  bool partial = false;         // entered on a thread that dropped events: later entries are missing
};

// What the figures cover when events were dropped past the memory cap. A thread whose events
// start to be dropped records nothing more (the cap stays reached), so each thread's figures
// are complete up to its last recorded event and miss everything after it. Times are ns from
// the first event.
struct Coverage {
  struct Thread {
    std::uint32_t index = 0;  // the track ("thread N" / "omp thread N")
    std::uint64_t os_tid = 0;
    std::uint64_t dropped = 0;
    std::uint64_t recorded_until = 0;  // its last recorded event
  };
  // A stretch of one thread's events that is missing (a raw trace's LOST entry): whole chunks
  // that never reached the file. The thread recorded again after it.
  struct Lost {
    std::uint32_t index = 0;  // the track
    std::uint64_t os_tid = 0;
    std::uint64_t from = 0, to = 0;  // its first and last lost event
    std::uint64_t events = 0;
    std::string reason;
  };
  std::uint64_t complete_until = 0;  // every thread recorded all its events until then
  std::uint64_t run_end = 0;         // the end of the run (when the outputs were made)
  std::vector<Thread> threads;       // the threads that dropped events; empty: nothing dropped
  std::vector<Lost> lost;            // the stretches lost, where they are known
  bool complete() const { return threads.empty(); }
};

// What the tool cost the program's threads beyond the hot path: the copies of their own full ring
// slots they made because the writer thread was behind (no core free for it).
struct ToolCost {
  struct Thread {
    std::uint32_t index = 0;  // the track
    std::uint64_t os_tid = 0;
    std::uint64_t flushes = 0, flush_ns = 0;
  };
  std::uint64_t flushes = 0, flush_ns = 0;  // over all threads
  std::vector<Thread> threads;              // the threads that flushed, by track
};

struct MemoryStats {
  std::string space;
  std::uint64_t allocations = 0, deallocations = 0;
  std::uint64_t bytes_allocated = 0;  // sum over allocations
  std::uint64_t high_water = 0;       // most bytes allocated at once
  std::uint64_t final_level = 0;      // still allocated at the end
  // Frees that no recorded allocation covers (wholly or in part), and the bytes not covered.
  std::uint64_t unmatched_frees = 0, unmatched_bytes = 0;
};

struct CopyStats {
  std::string dst_space, src_space;
  std::uint64_t calls = 0, bytes = 0, time = 0;
  double gb_per_s() const { return time ? double(bytes) / double(time) : 0.0; }  // bytes/ns = GB/s
};

// One deep copy site: the same destination and source views, spaces and size (findings look for
// the same copy repeated).
struct CopySiteStats {
  std::string dst_name, src_name, dst_space, src_space;
  std::uint64_t bytes = 0;  // of one call
  std::uint64_t calls = 0, time = 0;
};

// Allocations of one view name, space and size.
struct AllocSiteStats {
  std::string name, space;
  std::uint64_t bytes = 0;  // of one allocation
  std::uint64_t allocations = 0;
};

// At most this many distinct copy / allocation sites are told apart; later new ones are counted
// in Summary::sites_untracked only (a program that allocates ever new sizes keeps the fold small).
constexpr std::size_t kMaxSites = 4096;

// One piece of advice (findings.hpp): what to change, why, and how much time it may give back.
struct Finding {
  std::string id;        // the rule: fork_join_overhead, load_imbalance, ...
  std::string title;     // one line
  std::string subject;   // kernel, view, lock kind, device...; "" for the whole run
  std::string evidence;  // the figures of this run that made it fire
  std::uint64_t time_at_stake = 0;  // ns the fix may give back (an estimate)
  double share_of_run = 0;          // time_at_stake / run time, 0..1
  std::string fix;       // what to try, in Kokkos terms (OpenMP terms for an OpenMP construct)
  std::string threshold; // the rule that fired, as the README documents it
  std::string location;  // the OpenMP construct's label ("function file:line") when it is about one; else ""
};

struct NamedStats {
  std::string name;
  std::uint64_t calls = 0, total = 0;
};

// OpenMP figures (from the OMPT records).
struct OmpCountStats {
  std::string name;
  std::uint64_t count = 0;
  std::uint64_t total = 0;  // ns inside (work constructs, sync regions)
  std::uint64_t wait = 0;   // sync regions: ns waiting
};

struct OmpMutexStats {
  std::string kind;  // lock, nest_lock, critical, atomic, ordered (test_* count as their family)
  std::uint64_t holds = 0;         // acquired..released
  std::uint64_t nested_holds = 0;  // re-acquisitions of a nest lock already held (inside a hold)
  std::uint64_t wait = 0, hold = 0;  // ns waiting to acquire (all), ns held (outer holds)
  std::uint64_t failed_tries = 0;    // omp_test_lock / omp_test_nest_lock that did not get it (a wait, no hold)
};

struct OmpThreadStats {
  std::uint32_t index = 0;  // the track's registration order ("omp thread N")
  std::uint64_t os_tid = 0;
  std::string type;         // ompt_thread_t name, "none" without thread_begin
  int proc = -1, place = -1;  // ompt_get_proc_id / ompt_get_place_num at thread_begin
  std::uint64_t implicit_tasks = 0;
  std::uint64_t busy = 0;  // outermost implicit tasks' time minus the sync waits inside them
  std::uint64_t wait = 0;  // all sync-region waits of the thread
};

// The figures of a set of OpenMP parallel regions and their implicit tasks, additive: the regions
// of one Kokkos kernel (OmpKernelStats) or of one `omp parallel` site (OmpConstructStats).
struct OmpTeamStats {
  std::uint64_t parallel_regions = 0;
  std::uint64_t team_size_sum = 0;
  std::uint64_t task_time = 0, wait_time = 0;  // the implicit tasks: total ns, sync waits inside
  double imbalance_sum = 0;                   // over regions with implicit tasks
  // Over regions with implicit tasks: the busiest thread's busy time, and the mean busy time of the
  // region's threads (ns). A thread's busy time is its time inside the region's worksharing
  // constructs and explicit tasks where the region had any (the work itself: not the runtime's
  // dispatch, a reduction's combine, or the wait), else its implicit task's time minus its waits.
  // Region time minus busy_max is what no thread spent working (fork, join, dispatch); busy_max
  // minus busy_mean is what an even split would save. implicit_busy_max: the busiest implicit
  // task's time minus its waits, in every region.
  std::uint64_t busy_max = 0, busy_mean = 0, implicit_busy_max = 0;
  std::uint64_t imbalance_regions = 0;
  // What its regions held, for rules that must fit the construct: regions whose threads ran
  // worksharing constructs (of a known site) or explicit tasks, those with a worksharing loop, with
  // explicit tasks, and with tasks all created by one thread; regions asking for one thread
  // (num_threads(1), a false if clause) and regions nested in another (level > 0).
  std::uint64_t construct_regions = 0, loop_regions = 0, task_regions = 0, producer_regions = 0;
  std::uint64_t requested_one = 0, nested_regions = 0;
  void add(const OmpTeamStats& o) {
    parallel_regions += o.parallel_regions;
    team_size_sum += o.team_size_sum;
    task_time += o.task_time;
    wait_time += o.wait_time;
    imbalance_sum += o.imbalance_sum;
    busy_max += o.busy_max;
    busy_mean += o.busy_mean;
    implicit_busy_max += o.implicit_busy_max;
    imbalance_regions += o.imbalance_regions;
    construct_regions += o.construct_regions;
    loop_regions += o.loop_regions;
    task_regions += o.task_regions;
    producer_regions += o.producer_regions;
    requested_one += o.requested_one;
    nested_regions += o.nested_regions;
  }
  double mean_team_size() const { return parallel_regions ? double(team_size_sum) / double(parallel_regions) : 0.0; }
  // Mean over regions of (max - mean) / max of the busy time of the region's implicit tasks.
  double load_imbalance() const { return imbalance_regions ? imbalance_sum / double(imbalance_regions) : 0.0; }
  double barrier_wait_share() const { return task_time ? double(wait_time) / double(task_time) : 0.0; }
};

// The OpenMP parallel regions of one Kokkos kernel (by name and kind; joined through kernel ids).
struct OmpKernelStats : OmpTeamStats {
  std::string name, kind, device;  // its kernel row's
  std::uint64_t calls = 0;
  bool partial = false;  // its kernel row is partial, or an OpenMP thread dropped events
  double regions_per_call() const { return calls ? double(parallel_regions) / double(calls) : 0.0; }
};

// One OpenMP construct outside any Kokkos kernel, by kind and source location (the code address
// the runtime reported, resolved; addresses of one directive, such as a loop the compiler
// duplicated, share a row). Inside a kernel the kernel's row tells it.
// The team figures (OmpTeamStats): a parallel row's are its regions' as a kernel's are (from their
// implicit tasks); a work row's come from the construct's own spans, per region it ran in: each
// thread's time in it is its busy time, the wait at the implicit barrier ending it its wait.
struct OmpConstructStats : OmpTeamStats {
  enum class Category { Parallel, Work, Sync, Mutex, Task, Target };
  Category category = Category::Parallel;
  std::string kind;  // parallel, loop_static..., barrier_explicit / taskwait / taskgroup, critical / lock..., task, target...
  // Where (common/timeline/source_resolver.hpp): line 0 and file "" without line information;
  // module "" when no loaded object held the address.
  std::string function, file, caller, module, source, label;
  std::uint32_t line = 0;
  std::uint64_t offset = 0;
  // parallel: regions; work, sync: executions, one per thread; mutex: acquisitions (outer holds);
  // task: tasks created; target: regions.
  std::uint64_t calls = 0;
  std::uint64_t total = 0;  // ns: parallel, target: region time; work, sync: summed over threads;
                            // mutex: wait + hold; task: the tasks' run time (their stretches)
  std::uint64_t wait = 0;   // mutex: ns waiting to acquire; sync: ns waiting inside
  std::uint64_t hold = 0;   // mutex: ns held
  std::uint64_t nested_holds = 0, failed_tries = 0;  // mutex (as OmpMutexStats)
  std::uint64_t stretches = 0;                       // task: times a task of this site ran
  // task: tasks that started, their summed time from creation to first start, and the time
  // between two creations at this site on one thread with nothing else run between (create_gaps
  // of them): what creating one costs.
  std::uint64_t tasks_started = 0, start_delay = 0, create_gap = 0, create_gaps = 0;
  std::uint64_t regions_with_kernels = 0;  // parallel: regions during which a Kokkos kernel ran (the kernel rows tell those)
  bool partial = false;  // an OpenMP thread dropped events: the row may miss some
  // Kokkos' own code (its start-up, finalize, thread data): the "Kokkos runtime" group, apart from
  // the program's constructs (rankings, findings, kob diff's regressions).
  bool kokkos_runtime = false;
  std::uint64_t mean() const { return calls ? total / calls : 0; }
  const char* category_name() const;
  // What matches this construct in another run (kob diff, kob merge): kind, function, file and
  // line; without a line, module and offset (a rebuild changes them: no match rather than a wrong one).
  std::string place_key() const;
};

struct OmpSummary {
  std::uint64_t records = 0;  // OpenMP records read; 0: no OpenMP section
  std::uint64_t parallel_regions = 0, implicit_tasks = 0, initial_tasks = 0;
  std::vector<OmpCountStats> work;      // by ompt_work_t name, "masked" too
  std::vector<OmpCountStats> sync;      // by ompt_sync_region_t name
  std::vector<OmpCountStats> dispatch;  // by ompt_dispatch_t name
  std::uint64_t tasks_created = 0, task_stretches = 0, tasks_completed = 0;
  std::uint64_t tasks_cancelled = 0, tasks_discarded = 0;  // ended by cancellation; of those, never started
  std::uint64_t errors_warning = 0, errors_fatal = 0;       // error directives (ompt_callback_error)
  std::uint64_t hidden_helper_threads = 0;  // libomp's hidden-helper team: left out of the figures above
  std::uint64_t dependences = 0;             // dependences declared (sum over the dependences callbacks)
  std::uint64_t tasks_with_dependences = 0;  // dependences callbacks
  std::uint64_t task_dependences = 0;        // task_dependence callbacks (task-to-task links)
  std::vector<OmpMutexStats> mutex;
  std::uint64_t lock_inits = 0, lock_destroys = 0, cancels = 0, flushes = 0;
  std::uint64_t threads_initial = 0, threads_worker = 0, threads_other = 0, threads_unknown = 0;
  // The threads the program could have had: OMP_NUM_THREADS's first level, else the runtime's
  // processors (0: unknown). A run whose regions all had a team of 1 started no other thread.
  std::uint32_t available_threads = 0;
  std::vector<OmpThreadStats> threads;
  std::uint64_t outside_regions = 0;  // parallel regions in no Kokkos kernel
  std::uint64_t outside_time = 0;     // ns of the outermost ones among them
  std::vector<OmpKernelStats> kernels;  // kernels with parallel regions, in the order of Summary::kernels
  // Constructs outside Kokkos kernels by kind and source location, largest total first; empty when
  // the code addresses were not resolved (SummaryFold::set_sources) or none had one.
  std::vector<OmpConstructStats> constructs;
  bool present() const { return records != 0; }
};

// Target offload, per device (the host, -1, when a target region or op names no other device).
struct TargetOpStats {
  std::string name;  // data op type, or transfer direction
  std::uint64_t count = 0, bytes = 0, time = 0;  // time: ns inside (points count 0)
  double gb_per_s() const { return time ? double(bytes) / double(time) : 0.0; }
};

struct TargetDeviceStats {
  int device = 0;
  std::string type;        // from device_initialize; "" when never initialised
  std::string path;        // "callbacks" or "tracing" (device tracing interface), "" when never initialised
  std::vector<OmpCountStats> regions;   // target regions by kind: count, total ns
  std::uint64_t submits = 0, submit_time = 0;  // kernels launched
  std::vector<TargetOpStats> data_ops;   // by data op type
  std::vector<TargetOpStats> transfers;  // by direction: host_to_device, device_to_host, device_to_device
  std::uint64_t allocations = 0, deletes = 0;
  std::uint64_t alloc_bytes = 0;       // sum over alloc ops
  std::uint64_t alloc_high_water = 0;  // most bytes allocated at once (alloc +bytes, delete -bytes by address)
  std::uint64_t alloc_final = 0;       // still allocated at the end
  std::uint64_t device_records = 0;    // records from the device tracing interface
  bool used() const { return !regions.empty() || submits || !data_ops.empty() || device_records; }
};

// Kokkos deep copies that caused target data ops, by name ("dst <- src") and spaces.
struct TargetCopyStats {
  std::string name, dst_space, src_space;
  std::uint64_t calls = 0, bytes = 0;    // deep copies with data ops, and their bytes (Kokkos' figure)
  std::vector<TargetOpStats> ops;        // the data ops they caused, by type: count, bytes, time
};

struct TargetSummary {
  std::uint64_t records = 0;  // target and device records read; 0: no target section
  std::vector<TargetDeviceStats> devices;  // by device number, the host (-1) first if present
  std::vector<TargetCopyStats> deep_copies;
  std::uint64_t regions_in_kernels = 0, regions_outside = 0;  // target regions inside / outside a Kokkos kernel
  bool present() const { return records != 0; }
};

struct Summary {
  std::uint64_t run_time = 0;  // first to last event, ns; to the end of the run when events were dropped
  Coverage coverage;
  std::vector<KernelStats> kernels;  // by total time, largest first
  std::vector<RegionStats> regions;  // tree order (by path)
  std::vector<MemoryStats> memory;
  std::vector<CopyStats> copies;
  std::vector<CopySiteStats> copy_sites;    // by time, largest first
  std::vector<AllocSiteStats> alloc_sites;  // by allocations, most first
  std::uint64_t sites_untracked = 0;        // copies and allocations past kMaxSites distinct sites
  std::vector<NamedStats> fences;
  std::vector<NamedStats> sections;  // calls = intervals
  std::vector<NamedStats> mpi_calls;  // per MPI function (the PMPI layer), in the layer's order
  std::uint64_t profile_events = 0, dual_view_syncs = 0, dual_view_modifies = 0;
  std::uint64_t dropped = 0;
  ToolCost tool;
  OmpSummary openmp;
  TargetSummary target;
  std::uint64_t filtered_kernels = 0, filtered_regions = 0;
  bool cut_short = false;        // the run ended without a clean exit (crash, signal, _exit)
  std::uint64_t cut_spans = 0;   // spans then still open, cut at their thread's last event
  std::vector<std::string> problems;
  std::vector<Finding> findings;  // ranked: largest time at stake first
};

const char* kernel_kind_name(KernelKind k);

class SourceResolver;
// sources: resolves the constructs' code addresses (nullptr: no OpenMP constructs table).
Summary summarize(const Timeline& t, SourceResolver* sources = nullptr);

// Human-readable tables.
std::string summary_text(const Summary& s, const std::string& title);

// The text summary's cells, for other summaries of the same look (kob merge): a time ("12.3 ms"),
// a size ("8.0 MiB"), a program's name escaped and shortened, a construct's location, a table
// (first column left-aligned, the others right).
namespace summary_format {
std::string time(std::uint64_t ns);
std::string bytes(std::uint64_t b);
std::string name(std::string_view name);
// An OpenMP construct's label ("function file.cpp:12") as name() would show it, but cut in the
// function only, so that file and line stay whole.
std::string location(std::string_view label, std::size_t max_columns = SIZE_MAX);
std::string table(const std::vector<std::vector<std::string>>& rows);
}  // namespace summary_format
// The same figures as a JSON document.
std::string summary_json(const Summary& s, const std::string& other_data_json);
// One line for stderr when events were dropped (printed under --quiet too): how many, the cap,
// and the part of the run the figures cover.
std::string dropped_line(const Summary& s, std::uint64_t memory_limit_mib);

}  // namespace kob
