#include "common/analysis/findings.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "common/support/fixed_text.hpp"
#include "common/timeline/timeline.hpp"

namespace kob::findings {

namespace {

// Kokkos names the kernel that fills a new View "Kokkos::View::initialization [label]" (4.x may
// add " via memset"): its time belongs to the allocation, and alloc_in_loop reports it.
constexpr std::string_view kInitPrefix = "Kokkos::View::initialization [";
bool view_init(std::string_view kernel) { return kernel.substr(0, kInitPrefix.size()) == kInitPrefix; }

// Code of Kokkos itself (its backend's initialisation and finalisation open parallel regions outside
// any kernel): by the function's namespace, or by the library when there is no symbol.
bool kokkos_own(const OmpConstructStats& c) {
  const std::string_view fn = c.function, module = c.module;
  const std::string_view file = module.substr(module.rfind('/') == std::string_view::npos ? 0 : module.rfind('/') + 1);
  return fn.substr(0, 8) == "Kokkos::" || (file.substr(0, 9) == "libkokkos" && file.substr(0, 22) != "libkokkos_ompt_bridge.");
}

std::string t(std::uint64_t ns) { return summary_format::time(ns); }
std::string q(std::string_view name) { return "\"" + summary_format::name(name) + "\""; }
std::string pct(double v) { return text::fixed(100.0 * v, 1, "%"); }
std::string fixed1(double v) { return text::fixed(v, 1); }
std::string n(std::uint64_t v) { return std::to_string(v); }
std::uint64_t share_of(std::uint64_t ns, std::uint64_t calls) { return calls ? ns / calls * (calls - 1) + ns % calls * (calls - 1) / calls : 0; }

const char* kGate = "time at stake >= 1% of the run and >= 100 us";

class Rules {
 public:
  explicit Rules(const Summary& s) : s_(s) {
    const OmpSummary& o = s.openmp;
    omp_threads_ = o.threads_initial + o.threads_worker;
  }

  std::vector<Finding> run() {
    incomplete_data();
    for (const OmpKernelStats& k : s_.openmp.kernels) kernel_team(k);
    for (const OmpConstructStats& c : s_.openmp.constructs) {
      // Kokkos' own start-up and finalize: not the program's to change (the "Kokkos runtime" group).
      if (c.kokkos_runtime) continue;
      construct_team(c);
      serialized_site(c);
      task_granularity(c);
    }
    serialized();
    repeated_copies();
    allocs_in_loop();
    transfers();
    locks();
    fences();
    std::stable_sort(out_.begin(), out_.end(),
                     [](const Finding& a, const Finding& b) { return a.time_at_stake > b.time_at_stake; });
    return std::move(out_);
  }

 private:
  bool matters(std::uint64_t stake) const {
    return stake >= kMinStakeNs && double(stake) >= kMinShare * double(s_.run_time);
  }

  double run_share(std::uint64_t ns) const { return s_.run_time ? std::min(1.0, double(ns) / double(s_.run_time)) : 0.0; }

  void add(Finding f) {
    f.share_of_run = run_share(f.time_at_stake);
    out_.push_back(std::move(f));
  }

  const KernelStats* kernel_row(const std::string& name, const std::string& kind) const {
    for (const KernelStats& k : s_.kernels)
      if (k.name == name && k.kind == kind) return &k;
    return nullptr;
  }

  void incomplete_data() {
    const Coverage& c = s_.coverage;
    if (c.complete() && !s_.cut_short) return;
    Finding f;
    f.id = "incomplete_data";
    f.title = "The figures are incomplete: events are missing";
    std::string ev;
    if (!c.complete()) {
      f.time_at_stake = c.run_end > c.complete_until ? c.run_end - c.complete_until : 0;
      ev = n(s_.dropped) + " events were dropped or lost; the figures hold every event only until " + t(c.complete_until) +
           " of " + t(c.run_end) + ".";
    }
    if (s_.cut_short)
      ev += std::string(ev.empty() ? "" : " ") + "The run ended without a clean exit: " + n(s_.cut_spans) +
            " spans still open then end at their thread's last event.";
    f.evidence = ev;
    f.fix = "Raise --memory-limit (or record less: --events, --include/--exclude) so that nothing is dropped, and end "
            "the program cleanly (Kokkos::finalize() and a return from main, no _exit, crash or kill); the other "
            "findings may miss what the lost part held.";
    f.threshold = "any dropped or lost event, or a run cut short (always reported)";
    add(std::move(f));
  }

  // A parallel construct as the team rules see it: a Kokkos kernel's regions, or one `omp parallel`
  // site outside kernels.
  struct Team {
    const OmpTeamStats& team;
    std::string subject;   // the kernel's name, or the site's label
    std::string location;  // the site's label; "" for a kernel
    std::uint64_t calls = 0, total = 0;  // kernel calls or regions, and their time
    bool kernel() const { return location.empty(); }
    std::string named() const { return kernel() ? "Kernel " + q(subject) : "The OpenMP parallel region at " + summary_format::location(location); }
  };

  void kernel_team(const OmpKernelStats& k) {
    if (k.imbalance_regions == 0 || view_init(k.name)) return;
    const KernelStats* ks = kernel_row(k.name, k.kind);
    if (ks != nullptr && ks->total != 0 && fork_join({k, k.name, "", ks->calls, ks->total})) return;
    imbalance({k, k.name, "", ks ? ks->calls : 0, ks ? ks->total : 0}, ks != nullptr);
  }

  // A parallel region of the program's own. Left out: one that held Kokkos kernels (their rules
  // tell the cause: a kernel launched inside it runs serially, serialized_kernel), Kokkos' own
  // (Kokkos::initialize and finalize: not the program's to change), and, for fork and join, a site
  // run once (not a stream of small regions; the first region of a run also pays for starting the
  // team's threads).
  void construct_team(const OmpConstructStats& c) {
    if (c.category != OmpConstructStats::Category::Parallel || c.imbalance_regions == 0 || c.regions_with_kernels != 0 ||
        kokkos_own(c))
      return;
    const Team team{c, c.label, c.label, c.calls, c.total};
    if (c.total != 0 && c.calls >= 2 && fork_join(team)) return;
    imbalance(team, true);
  }

  // What no thread of the team spent working: fork, join, Kokkos dispatch, a reduction's combine.
  // Work is what its threads did inside worksharing constructs and tasks where the region had any
  // (OmpTeamStats::busy_max): the implicit task's own time holds the runtime's dispatch.
  // True when it fires: the team then gets no load_imbalance. Its stake (busiest minus mean work)
  // is below the work, so below this one's; the split of a few hundred ns of work is mostly the
  // threads' arrival skew (a thread taken off the CPU on a busy machine), and the fix for an
  // uneven split (a dynamic schedule) adds cost to a region that is already mostly overhead.
  bool fork_join(const Team& k) {
    const std::uint64_t overhead = k.total > k.team.busy_max ? k.total - k.team.busy_max : 0;
    const double share = double(overhead) / double(k.total);
    if (share < kForkJoinShare || !matters(overhead)) return false;
    const std::uint64_t mean = k.calls ? k.total / k.calls : 0;
    Finding f;
    f.id = "fork_join_overhead";
    f.subject = k.subject;
    f.location = k.location;
    f.title = k.named() + " spends most of its time starting and joining its " + (k.kernel() ? "OpenMP " : "") + "team";
    f.evidence = n(k.calls) + (k.kernel() ? " calls of " : " regions of ") + t(mean) + " on average (" + t(k.total) +
                 " in all); " + worked(k) + ", so " + pct(share) + " of its time (" + t(overhead) +
                 ") went to fork, join and dispatch (mean team " + fixed1(k.team.mean_team_size()) + ", barrier wait " +
                 pct(k.team.barrier_wait_share()) + " of its task time).";
    if (k.team.load_imbalance() >= kImbalance)
      f.evidence += " Its work is also split unevenly (load imbalance " + pct(k.team.load_imbalance()) +
                    "): worth a look once each " + (k.kernel() ? "launch" : "region") + " does more work.";
    f.time_at_stake = overhead;
    if (k.kernel()) {
      f.fix = "Give each launch more work: fuse it with the kernels next to it (one Kokkos::parallel_for doing both "
              "loops), launch once over a larger range instead of many tiny launches, or run tiny ranges on fewer threads "
              "(a Kokkos::RangePolicy on a smaller Kokkos::OpenMP partition or instance, or Kokkos::Serial).";
      f.threshold = "kernel time minus its busiest threads' work >= 50% of kernel time; " + std::string(kGate);
    } else {
      f.fix = "Fork and join less often: merge this region with the small regions next to it into one `#pragma omp "
              "parallel` holding several `#pragma omp for nowait` loops (a barrier only where one loop reads what another "
              "wrote), give each region more work (move the parallel region outside the loop around it), or run small "
              "instances serially with an `if(n > THRESHOLD)` clause (or on fewer threads with num_threads).";
      f.threshold = "region time minus its busiest threads' work (time in its worksharing constructs and tasks, or "
                    "where it has none, in the region but its waits) >= 50% of region time; " + std::string(kGate);
    }
    add(std::move(f));
    return true;
  }

  // The busiest threads' work as fork_join counts it, with the other measure where they differ.
  static std::string worked(const Team& k) {
    const OmpTeamStats& m = k.team;
    if (m.construct_regions == 0) return "its busiest threads worked " + t(m.busy_max);
    const std::string in = m.construct_regions == m.parallel_regions ? "" : " (in the " + n(m.construct_regions) + " regions that had any)";
    return "its busiest threads worked " + t(m.busy_max) + " inside its worksharing constructs and tasks" + in + " and " +
           t(m.implicit_busy_max) + " in the region but its waits";
  }

  // known: the time of the kernel (or region) is known and told in the evidence.
  void imbalance(const Team& k, bool known) {
    if (k.team.load_imbalance() < kImbalance) return;
    const std::uint64_t stake = k.team.busy_max > k.team.busy_mean ? k.team.busy_max - k.team.busy_mean : 0;
    if (!matters(stake)) return;
    Finding f;
    f.id = "load_imbalance";
    f.subject = k.subject;
    f.location = k.location;
    f.title = k.named() + " keeps threads idle: its work is split unevenly";
    f.evidence = "Load imbalance " + pct(k.team.load_imbalance()) + " over its " + n(k.team.imbalance_regions) +
                 " parallel regions ((max - mean) / max busy time); its busiest threads worked " + t(k.team.busy_max) +
                 ", the mean thread " + t(k.team.busy_mean) +
                 (known ? std::string(k.kernel() ? " (kernel time " : " (region time ") + t(k.total) + ")." : ".");
    f.time_at_stake = stake;
    if (k.kernel()) {
      f.fix = "Let threads take work as they go: Kokkos::RangePolicy<Kokkos::Schedule<Kokkos::Dynamic>> (with a chunk "
              "size for cheap iterations), or split the costly iterations differently (a TeamPolicy over rows, spread "
              "the expensive part across the range).";
    } else {
      f.fix = imbalance_fix(k.team);
    }
    f.threshold = "load imbalance >= 25%; at stake: busiest minus mean busy time, summed over regions; " + std::string(kGate);
    add(std::move(f));
  }

  // Advice that names what the region holds: its loop, its tasks, or its threads' own split.
  static std::string imbalance_fix(const OmpTeamStats& m) {
    if (m.loop_regions != 0)
      return "Let threads take work as they go: schedule(dynamic[,chunk]) on the loop of this region (a chunk of "
             "several iterations when they are cheap) or schedule(guided); or split the costly iterations differently "
             "(collapse(2) over a nested loop, spread the expensive iterations across the range).";
    if (m.producer_regions * 2 > m.task_regions)
      return "One thread creates the tasks while the others wait for them: create them from every thread (a taskloop, "
             "or a `#pragma omp for` whose iterations create the tasks, instead of one `single` or `masked` thread "
             "looping), or make each task larger so that creating them keeps up.";
    if (m.task_regions != 0)
      return "Its threads run unequal shares of its tasks: split the work into more tasks of similar size (a taskloop "
             "with grainsize), so that idle threads can take some.";
    return "Its threads split the work themselves (by omp_get_thread_num) unevenly: give each thread an equal share of "
           "the cost, not of the items, or let the runtime split it with a worksharing loop (`#pragma omp for "
           "schedule(dynamic)`).";
  }

  // `omp parallel` sites of the program's own whose every region ran on a team of 1 while the run
  // had more OpenMP threads.
  void serialized_site(const OmpConstructStats& c) {
    if (c.category != OmpConstructStats::Category::Parallel || c.parallel_regions == 0 || c.regions_with_kernels != 0 ||
        kokkos_own(c) || c.team_size_sum > c.parallel_regions)
      return;
    const std::uint64_t threads = std::max<std::uint64_t>(omp_threads_, s_.openmp.available_threads);
    if (threads < 2) return;
    const std::uint64_t stake = c.total / threads * (threads - 1);
    if (!matters(stake)) return;
    Finding f;
    f.id = "serialized_region";
    f.subject = c.label;
    f.location = c.label;
    f.title = "The OpenMP parallel region at " + summary_format::location(c.label) + " ran on one thread";
    const bool nested = c.nested_regions == c.parallel_regions, asked = c.requested_one == c.parallel_regions;
    f.evidence = n(c.parallel_regions) + " regions, " + t(c.total) + " in all, each with a team of 1" +
                 (nested ? ", each nested in another parallel region" : "") +
                 (asked ? ", each asking for one thread" : "") + ", while the run " +
                 (omp_threads_ >= 2 ? "had " + n(omp_threads_) + " OpenMP threads." : "could have had " + n(threads) +
                                                                                   " (OMP_NUM_THREADS, else the processors).");
    f.time_at_stake = stake;
    if (nested) {
      f.fix = "It is nested in another parallel region and nesting is off, so its team is the one thread that met it: "
              "allow a second level (OMP_MAX_ACTIVE_LEVELS=2 or omp_set_max_active_levels(2), with threads for it: "
              "OMP_NUM_THREADS=4,2), or move the parallelism to the outer region (collapse the two loops).";
    } else if (asked) {
      f.fix = "It asks for one thread: a num_threads(1) clause (or one computed as 1), or an if clause that is false "
              "every time it runs. Give it the threads (num_threads(omp_get_max_threads())) or fix the if clause's "
              "condition; where the work is too small for a team, remove the directive.";
    } else {
      f.fix = "The runtime gave it no threads: check OMP_THREAD_LIMIT, OMP_DYNAMIC (omp_set_dynamic(0)) and "
              "omp_set_num_threads calls before it, and whether it runs inside a task or a region that used them all.";
    }
    f.threshold = "an `omp parallel` site all of whose regions had a team of 1 while the run had, or could have had "
                  "(OMP_NUM_THREADS, else the processors), more than one OpenMP thread; at stake: its time x (threads - 1) / "
                  "threads; " + std::string(kGate);
    add(std::move(f));
  }

  // Explicit tasks at one creation site too small for what creating and starting them costs.
  void task_granularity(const OmpConstructStats& c) {
    if (c.category != OmpConstructStats::Category::Task || c.tasks_started < kManyTasks || c.create_gaps == 0) return;
    const std::uint64_t run = c.total / c.tasks_started, create = c.create_gap / c.create_gaps;
    const std::uint64_t delay = c.start_delay / c.tasks_started;
    if (run >= kTinyTaskNs && run >= create + delay) return;
    const std::uint64_t stake = create * c.calls;
    if (!matters(stake)) return;
    Finding f;
    f.id = "task_granularity";
    f.subject = c.label;
    f.location = c.label;
    f.title = "The tasks created at " + summary_format::location(c.label) + " are too small for what they cost";
    f.evidence = n(c.calls) + " tasks, " + t(run) + " of run time each on average (" + t(c.total) + " in all); creating one took " +
                 t(create) + " (the time between two creations on one thread, over " + n(c.create_gaps) +
                 "), and one waited " + t(delay) + " from its creation to its start.";
    f.time_at_stake = stake;
    f.fix = "Create fewer, larger tasks: give each task a block of work (a taskloop with grainsize(G) or num_tasks(N) "
            "for a loop), stop splitting below a size (an if(size > CUTOFF) or final(depth > D) clause runs the rest in "
            "the creating task), or run the small pieces inline. With Kokkos tasks (TaskScheduler), the same: spawn "
            "above a size, compute below it.";
    f.threshold = ">= 1000 tasks created at one site with a mean run time under 1 us or under their creation plus "
                  "their wait to start; at stake: tasks x the time to create one; " + std::string(kGate);
    add(std::move(f));
  }

  // Kernels on the OpenMP backend that ran on one thread while the run had more.
  void serialized() {
    const OmpSummary& o = s_.openmp;
    if (!o.present() || o.parallel_regions == 0 || omp_threads_ < 2) return;
    for (const KernelStats& ks : s_.kernels) {
      if (ks.device != "OpenMP" || view_init(ks.name) || ks.partial) continue;
      const OmpKernelStats* row = nullptr;
      for (const OmpKernelStats& k : o.kernels)
        if (k.name == ks.name && k.kind == ks.kind) row = &k;
      const bool none = row == nullptr || row->parallel_regions == 0;
      if (!none && row->team_size_sum > row->parallel_regions) continue;  // some region had a team
      const std::uint64_t stake = ks.total / omp_threads_ * (omp_threads_ - 1);
      if (!matters(stake)) continue;
      Finding f;
      f.id = "serialized_kernel";
      f.subject = ks.name;
      f.title = "Kernel " + q(ks.name) + " ran on one thread";
      f.evidence = n(ks.calls) + " calls, " + t(ks.total) + " in all, " +
                   (none ? std::string("opened no OpenMP parallel region")
                         : "its " + n(row->parallel_regions) + " parallel regions had a team of 1") +
                   ", while the run had " + n(omp_threads_) + " OpenMP threads.";
      f.time_at_stake = stake;
      f.fix = "Launch it outside any parallel region (a Kokkos kernel inside an omp parallel region or inside another "
              "kernel runs serially), check OMP_MAX_ACTIVE_LEVELS / omp_set_max_active_levels and the Kokkos::OpenMP "
              "instance or partition it runs on, and give it enough iterations for a team.";
      f.threshold = "an OpenMP-backend kernel with no parallel region or only teams of 1 while the run had more than one "
                    "OpenMP thread; at stake: kernel time x (threads - 1) / threads; " + std::string(kGate);
      add(std::move(f));
    }
  }

  void repeated_copies() {
    for (const CopySiteStats& c : s_.copy_sites) {
      if (c.calls < kRepeats) continue;
      const std::uint64_t stake = share_of(c.time, c.calls);
      if (!matters(stake)) continue;
      const bool same_space = c.dst_space == c.src_space;
      Finding f;
      f.id = "repeated_deep_copy";
      f.subject = c.dst_name + " <- " + c.src_name;
      f.title = "The same deep copy " + q(f.subject) + " ran " + n(c.calls) + " times";
      f.evidence = "deep_copy(" + summary_format::name(c.dst_name) + " [" + summary_format::name(c.dst_space) + "] <- " +
                   summary_format::name(c.src_name) + " [" + summary_format::name(c.src_space) + "]) of " + summary_format::bytes(c.bytes) +
                   " ran " + n(c.calls) + " times, " + t(c.time) + " in all (" + t(c.time / c.calls) + " each).";
      f.time_at_stake = stake;
      f.fix = same_space ? "Copy once, outside the loop, and use the data where it is; to switch buffers, swap or assign "
                           "the Views (that shares the allocation) instead of copying."
                         : "Keep the data in the space that uses it and copy once; with a Kokkos::DualView, call modify() "
                           "where it changes and sync() only where the other side needs it, so unchanged data stays put.";
      f.threshold = "the same (destination, source, bytes) deep copy >= 10 times; at stake: all but one call's time; " +
                    std::string(kGate);
      add(std::move(f));
    }
  }

  void allocs_in_loop() {
    std::vector<std::string> seen;
    for (const AllocSiteStats& a : s_.alloc_sites) {
      if (a.allocations < kRepeats || std::find(seen.begin(), seen.end(), a.name) != seen.end()) continue;
      const std::string init = std::string(kInitPrefix) + a.name + "]";
      std::uint64_t calls = 0, total = 0;
      for (const KernelStats& k : s_.kernels)
        if (k.name.compare(0, init.size(), init) == 0) {
          calls += k.calls;
          total += k.total;
        }
      if (calls == 0) continue;
      seen.push_back(a.name);
      const std::uint64_t stake = share_of(total, calls);
      if (!matters(stake)) continue;
      Finding f;
      f.id = "alloc_in_loop";
      f.subject = a.name;
      f.title = "View " + q(a.name) + " is allocated and initialised over and over";
      f.evidence = "View " + q(a.name) + " (" + summary_format::bytes(a.bytes) + " in " + summary_format::name(a.space) + ") was allocated " +
                   n(a.allocations) + " times; its initialization kernel ran " + n(calls) + " times, " + t(total) + " in all.";
      f.time_at_stake = stake;
      f.fix = "Allocate it once outside the loop and reuse it; where every element is written before it is read, "
              "allocate with Kokkos::view_alloc(Kokkos::WithoutInitializing, \"" + summary_format::name(a.name) +
              "\") to skip the fill.";
      f.threshold = "the same view name, space and size allocated >= 10 times with an initialization kernel; at stake: "
                    "all but one initialization's time; " + std::string(kGate);
      add(std::move(f));
    }
  }

  void transfers() {
    for (const TargetDeviceStats& d : s_.target.devices) {
      if (d.device == kHostDevice || d.transfers.empty()) continue;
      std::uint64_t time = 0, bytes = 0, count = 0;
      for (const TargetOpStats& x : d.transfers) {
        time += x.time;
        bytes += x.bytes;
        count += x.count;
      }
      if (run_share(time) < kTransferShare || !matters(time)) continue;
      Finding f;
      f.id = "transfer_hotspot";
      f.subject = "device " + std::to_string(d.device);
      f.title = "Host-device transfers take " + pct(run_share(time)) + " of the run on device " + std::to_string(d.device);
      f.evidence = n(count) + " transfers moved " + summary_format::bytes(bytes) + " in " + t(time) + ", " + pct(run_share(time)) + " of the run.";
      f.time_at_stake = time;
      f.fix = "Keep Views in the device's memory space across kernels and copy to and from host mirrors "
              "(Kokkos::create_mirror_view + Kokkos::deep_copy) only at the start and the end; with a Kokkos::DualView, "
              "sync() only what was modified; overlap the rest with execution space instances.";
      f.threshold = "target data transfers to or from one device >= 10% of the run; " + std::string(kGate);
      add(std::move(f));
    }
  }

  // Per acquire site where the constructs table has it; per mutex kind for the waits it does not
  // hold (inside Kokkos kernels, no code address, or no table).
  void locks() {
    for (const OmpConstructStats& c : s_.openmp.constructs)
      if (c.category == OmpConstructStats::Category::Mutex && !c.kokkos_runtime) lock(c.kind, c.label, c.calls, c.wait, c.hold);
    for (const OmpMutexStats& m : s_.openmp.mutex) {
      std::uint64_t holds = m.holds, wait = m.wait, hold = m.hold;
      for (const OmpConstructStats& c : s_.openmp.constructs) {
        if (c.category != OmpConstructStats::Category::Mutex || c.kind != m.kind) continue;
        holds -= std::min(holds, c.calls);
        wait -= std::min(wait, c.wait);
        hold -= std::min(hold, c.hold);
      }
      lock(m.kind, "", holds, wait, hold);
    }
  }

  // where: the acquire site's label; "" for the kind's waits as a whole.
  void lock(const std::string& kind, const std::string& where, std::uint64_t holds, std::uint64_t wait, std::uint64_t hold) {
    const std::uint64_t threads = std::max<std::uint64_t>(1, omp_threads_);
    const std::uint64_t both = wait + hold;
    if (both == 0) return;
    const double share = double(wait) / double(both);
    const std::uint64_t stake = wait / threads;
    if (share < kLockWaitShare || !matters(stake)) return;
    const std::string at = where.empty() ? "" : " at " + summary_format::location(where);
    Finding f;
    f.id = "lock_contention";
    f.subject = kind;
    f.location = where;
    f.title = "Threads queue for OpenMP " + kind + " sections" + at;
    f.evidence = "Threads waited " + t(wait) + " in all to acquire a " + kind + at + " (" + n(holds) + " holds, " + t(hold) +
                 " held): " + pct(share) + " of its wait and hold time; over the run's " + n(threads) +
                 " OpenMP threads that is " + t(stake) + ".";
    f.time_at_stake = stake;
    if (where.empty()) {
      f.fix = "Lock less: accumulate per thread and combine once (Kokkos::parallel_reduce with a reducer instead of a "
              "critical section), use Kokkos::atomic_add / atomic_fetch_* for single updates or Kokkos::ScatterView "
              "for scattered sums, and keep the locked part short.";
    } else {
      f.fix = "Lock less: let OpenMP combine the result (a reduction(+:sum) clause on the loop, or per-thread partial "
              "results combined once after it) instead of a critical section or lock around each update, use `#pragma "
              "omp atomic` for a single scalar update, and keep the locked part short.";
    }
    f.threshold = std::string("wait >= 25% of wait + hold time of one mutex ") + (where.empty() ? "kind" : "acquire site") +
                  "; at stake: wait time / OpenMP threads; " + std::string(kGate);
    add(std::move(f));
  }

  void fences() {
    for (const NamedStats& fe : s_.fences) {
      if (run_share(fe.total) < kFenceShare || !matters(fe.total)) continue;
      Finding f;
      f.id = "fence_dominated";
      f.subject = fe.name;
      f.title = "Fence " + q(fe.name) + " takes " + pct(run_share(fe.total)) + " of the run";
      f.evidence = n(fe.calls) + " fences named " + q(fe.name) + " took " + t(fe.total) + ", " + pct(run_share(fe.total)) +
                   " of the run.";
      f.time_at_stake = fe.total;
      f.fix = "Remove fences that are not needed (a Kokkos::fence() after every kernel); fence only the execution space "
              "instance that produced the data (exec.fence()) and run independent work on separate instances.";
      f.threshold = "one fence name >= 10% of the run; " + std::string(kGate);
      add(std::move(f));
    }
  }

  const Summary& s_;
  std::uint64_t omp_threads_ = 0;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> find(const Summary& s) { return Rules(s).run(); }

}  // namespace kob::findings
