// SummaryFold's table of OpenMP constructs outside Kokkos kernels (OmpSummary::constructs): each
// span that carries a code address counts into the row of its construct kind and source location.
// Internal: SummaryFold's state (summary_fold_state.hpp) holds one.
//
// Rows are keyed on the resolved location, not on the address: a directive the compiler emitted
// twice (a loop versioned or peeled) reports two addresses and is one row. Each distinct address is
// resolved once; an event then costs one hash lookup.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/timeline/source_resolver.hpp"
#include "common/timeline/timeline.hpp"
#include "common/analysis/summary.hpp"

namespace kob::summary_fold_detail {

// A time or a count as a double: one conversion below 2^63 (every time in ns, for 292 years), where
// the conversion of any unsigned 64-bit value takes six instructions; the same value either way.
inline double as_double(std::uint64_t x) {
  auto s = static_cast<std::int64_t>(x);
  if (s < 0) [[unlikely]]
    return static_cast<double>(x);
  asm("" : "+r"(s));  // else the compiler, seeing the same value either way, makes it the unsigned conversion again
  return static_cast<double>(s);
}

// The team figures of one parallel region from its tasks' busy times (tasks > 0): what a kernel's
// row and a parallel construct's row add up for each region they held, and a work construct's row
// for each region it ran in (its threads' time in it as their busy time). Regions and team sizes
// are counted apart.
// Inline: the per-thread engine folds each region through it (summary_engine.cpp).
inline OmpTeamStats one_region(std::uint64_t tasks, std::uint64_t max_busy, std::uint64_t sum_busy, std::uint64_t task_time,
                               std::uint64_t wait_time) {
  OmpTeamStats r;
  r.task_time = task_time;
  r.wait_time = wait_time;
  const double mean = as_double(sum_busy) / as_double(tasks);
  r.imbalance_sum = max_busy ? (as_double(max_busy) - mean) / as_double(max_busy) : 0.0;
  r.imbalance_regions = 1;
  r.busy_max = max_busy;
  r.busy_mean = sum_busy / tasks;
  return r;
}

// ompt_task_status_t after which a task runs no more: complete, cancel, detach (its fulfill comes
// later, with no stretch), taskwait_complete.
constexpr std::uint32_t kTaskwaitFlag = 0x10;  // ompt_task_taskwait: never runs, its span is a wait
constexpr bool task_ends(std::uint32_t status) { return status == 1 || status == 3 || status == 4 || status == 8; }

// ompt_sync_region_t kinds the program wrote itself: barrier (the generic one), barrier_explicit,
// taskwait, taskgroup. Implicit barriers belong to their loop or region, whose rows tell them.
constexpr bool explicit_sync(std::uint16_t kind) { return kind == 1 || kind == 3 || kind == 5 || kind == 6; }
// The same kinds as bits (bit k: kind k), for a test that takes them with others in one mask.
constexpr std::uint32_t kExplicitSyncKinds = 1u << 1 | 1u << 3 | 1u << 5 | 1u << 6;
static_assert([] {
  for (std::uint16_t k = 0; k < 64; ++k)
    if (explicit_sync(k) != (k < 32 && ((kExplicitSyncKinds >> k) & 1) != 0)) return false;
  return true;
}());

// A mutex span into figures with OmpMutexStats' fields (the kind's row and a site's row):
// waits and failed tries, nested holds, outer holds (counted in `holds`) and their time.
template <class Stats>
void count_mutex(Stats& s, std::uint64_t& holds, std::uint64_t dur, bool hold, bool nested, bool failed) {
  if (!hold) {
    s.wait += dur;
    s.failed_tries += failed ? 1 : 0;
  } else if (nested) {
    ++s.nested_holds;
  } else {
    ++holds;
    s.hold += dur;
  }
}
template <class Stats>
void count_mutex(Stats& s, std::uint64_t& holds, const OmpMutexSpan& m) {
  count_mutex(s, holds, m.dur(), m.hold, m.nested, m.failed);
}

class ConstructRows {
 public:
  static constexpr std::uint32_t kNoRow = UINT32_MAX;
  using Category = OmpConstructStats::Category;

  // nullptr (the default): no rows at all, the summary as without locations. It must outlive
  // result() (the rows keep its locations, not copies).
  void set_sources(SourceResolver* sources) { sources_ = sources; }
  // Keep every call's time per row (SummaryFold::set_call_times); take_calls() gives them by
  // place_key() once the rows are complete.
  void keep_calls(bool on) { keep_calls_ = on; }
  void take_calls(std::map<std::string, std::vector<std::uint64_t>>& out);

  // A parallel region's row (kNoRow: none: in a kernel, the hidden-helper team's, no address);
  // kernel_inside: a Kokkos kernel ran during it. Its team figures come later, through team().
  std::uint32_t parallel(const OmpParallelSpan& p, bool kernel_inside);
  void team(std::uint32_t row, const OmpTeamStats& region) {
    if (row < rows_.size()) rows_[row].add(region);
  }

  // A work construct's (loop, sections, single...) team figures come from its own spans, per
  // parallel region: each thread's time in it (its busy time), and the wait at the implicit barrier
  // that ends it on that thread. The region's join collects them (parts) until it completes.
  struct WorkPart {
    std::uint32_t row = 0, track = 0;
    std::uint64_t busy = 0, barrier = 0, wait = 0;  // ns in the construct; in its implicit barrier, waiting there
    bool loop = false;  // a worksharing loop (ompt_work_loop*); row kNoRow: constructs without one (in a kernel)
  };
  std::uint32_t work(const OmpWorkSpan& w);  // its row, kNoRow when none
  // The work construct that ended last on `track` and the region it ran in (parts: that region's).
  struct LastWork {
    std::uint32_t row = kNoRow;
    std::uint64_t parallel_id = 0, end = 0;
  };
  LastWork& last_work(std::uint32_t track) {
    if (track >= last_work_.size()) last_work_.resize(track + 1);
    return last_work_[track];
  }
  static WorkPart& part(std::vector<WorkPart>& parts, std::uint32_t row, std::uint32_t track);
  // A region's parts, once all its threads are in: one team figure per construct.
  void work_team(const std::vector<WorkPart>& parts);

  void sync(const OmpSyncSpan& y);
  void mutex(const OmpMutexSpan& m);
  // Every create, in the order given (they are numbered so); its row (kNoRow: none).
  std::uint32_t task_create(const OmpTaskCreate& c);
  // A creation at `row` that followed another at the same row on one thread by `gap` ns, with no
  // task run between: the cost of creating one.
  void create_gap(std::uint32_t row, std::uint64_t gap);
  void task(const OmpTaskSpan& k);
  void target(const OmpTargetSpan& t);

  // For the per-thread engine (summary_engine.cpp), which sums a construct's calls on each thread
  // and adds them at once: the row of an address (made on first use: the engine asks in the order
  // the constructs' first calls ended, so that rows keep first-seen order; kNoRow without sources
  // or address), whether it has one already, and the figures added.
  std::uint32_t row_of(Category c, std::uint16_t kind, std::uint64_t codeptr) {
    // The same few constructs come back region after region: a small direct-mapped cache in front
    // of the table (row_of_slow), looked up inline.
    const std::uint32_t k = (static_cast<std::uint32_t>(c) << 16) | kind;
    Recent& r = recent(k, codeptr);
    if (r.holds(k, codeptr)) return r.row;
    const std::uint32_t row = row_of_slow(c, kind, codeptr);
    if (row != kNoRow) r = {codeptr, k, row};
    return row;
  }
  // The row of an address already seen (kNoRow: none yet).
  std::uint32_t known_row(Category c, std::uint16_t kind, std::uint64_t codeptr) {
    const std::uint32_t k = (static_cast<std::uint32_t>(c) << 16) | kind;
    const Recent& r = recent(k, codeptr);
    return r.holds(k, codeptr) ? r.row : known_row_slow(k, codeptr);
  }
  // The engine's first-seen order: a row's earliest first call (its end, track and order on the
  // track: the builder's span stream order). The table's ties go by it: the engine makes rows epoch
  // by epoch, and a thread's chunk can run past the epoch's bound, so a row made in one epoch may
  // have been seen first after one made in the next.
  void seen_first(std::uint32_t row, std::uint64_t end, std::uint32_t track, std::uint64_t seq) {
    if (row < first_.size() && first_[row].end < end) return;  // most calls: seen earlier already
    seen_first_slow(row, end, track, seq);
  }
  void add_parallel(std::uint32_t row, std::uint64_t dur, std::uint32_t team_size, bool kernel_inside) {
    if (row >= rows_.size()) return;
    OmpConstructStats& r = rows_[row];
    ++r.calls;
    r.total += dur;
    add_call(row, dur);
    ++r.parallel_regions;
    r.team_size_sum += team_size;
    r.regions_with_kernels += kernel_inside ? 1 : 0;
  }
  void add_calls(std::uint32_t row, std::uint64_t calls, std::uint64_t total, std::uint64_t wait) {
    if (row >= rows_.size()) return;
    rows_[row].calls += calls;
    rows_[row].total += total;
    rows_[row].wait += wait;
  }
  // A mutex site's figures summed on one thread (count_mutex's fields): holds are its calls.
  void add_mutex(std::uint32_t row, std::uint64_t holds, std::uint64_t wait, std::uint64_t hold, std::uint64_t nested_holds,
                 std::uint64_t failed_tries) {
    if (row >= rows_.size()) return;
    OmpConstructStats& r = rows_[row];
    r.calls += holds;
    r.wait += wait;
    r.hold += hold;
    r.nested_holds += nested_holds;
    r.failed_tries += failed_tries;
  }
  // A task creation site's creates on one thread.
  void add_task_creates(std::uint32_t row, std::uint64_t creates) {
    if (row < rows_.size()) rows_[row].calls += creates;
  }
  // One stretch of a task created at the row's site (task): its time; first: the task's first
  // stretch, `delay` after its creation.
  void add_task_stretch(std::uint32_t row, std::uint64_t dur, std::uint64_t delay, bool first) {
    if (row >= rows_.size()) return;
    OmpConstructStats& r = rows_[row];
    ++r.stretches;
    r.total += dur;
    if (first) {
      ++r.tasks_started;
      r.start_delay += delay;
    }
  }
  // Each call's time of the calls add_calls added (keep_calls), in any order.
  void add_call_times(std::uint32_t row, const std::uint64_t* ns, std::size_t n) {
    if (!keep_calls_ || row >= rows_.size() || n == 0) return;
    if (row >= calls_.size()) calls_.resize(std::size_t(row) + 1);
    calls_[row].insert(calls_[row].end(), ns, ns + n);
  }

  // Tasks created at a known site that have not ended yet.
  std::size_t pending() const { return task_rows_.size(); }
  void clear_pending() { task_rows_.clear(); }

  // The rows, largest total first (ties: first seen first); partial: mark them all.
  std::vector<OmpConstructStats> result(bool partial) const;

 private:
  OmpConstructStats located(std::uint32_t i) const;  // row i with its location's fields
  // The test inline, the keeping out of line: a region's figures call it whether kob diff asked
  // for call times or not (a call each cost 17 Ir a region, callgrind).
  void add_call(std::uint32_t row, std::uint64_t ns) {
    if (keep_calls_) [[unlikely]]
      keep_call(row, ns);
  }
  void keep_call(std::uint32_t row, std::uint64_t ns);
  bool keep_calls_ = false;
  std::vector<std::vector<std::uint64_t>> calls_;  // by row
  std::vector<std::uint64_t> lock_wait_;          // by track: the wait before the next hold
  std::uint32_t row(Category c, std::uint16_t kind, const char* kind_name, std::uint64_t codeptr);
  std::uint32_t row_of_slow(Category c, std::uint16_t kind, std::uint64_t codeptr);
  std::uint32_t known_row_slow(std::uint32_t kind, std::uint64_t codeptr);
  void seen_first_slow(std::uint32_t row, std::uint64_t end, std::uint32_t track, std::uint64_t seq);
  struct FirstKey {
    std::uint64_t end = UINT64_MAX;
    std::uint32_t track = UINT32_MAX;
    std::uint64_t seq = UINT64_MAX;
  };
  std::vector<FirstKey> first_;  // by row: seen_first's (empty: the order the rows were made)
  struct Recent {
    std::uint64_t codeptr = 0;  // 0: empty
    std::uint32_t kind = 0, row = 0;
    bool holds(std::uint32_t k, std::uint64_t c) const { return codeptr == c && kind == k && c != 0; }
  };
  static constexpr std::size_t kRecent = 16;
  std::array<Recent, kRecent> recent_{};
  Recent& recent(std::uint32_t k, std::uint64_t codeptr) { return recent_[(codeptr ^ (codeptr >> 9) ^ k) & (kRecent - 1)]; }

  SourceResolver* sources_ = nullptr;
  // The figures; the strings of each row's location stay in the resolver until result().
  std::vector<OmpConstructStats> rows_;
  std::vector<const SourceLocation*> where_;  // by row
  // (address, category and kind) -> row: open addressing in one flat array, so that a run of many
  // distinct addresses costs one cache miss per event, not a hash node's two or three.
  struct Slot {
    std::uint64_t codeptr = 0;  // 0: empty (an address 0 has no row)
    std::uint32_t kind = 0, row = 0;
  };
  std::vector<Slot> by_address_;
  std::size_t addresses_ = 0;
  std::uint32_t* find_address(std::uint64_t codeptr, std::uint32_t kind);
  void add_address(std::uint64_t codeptr, std::uint32_t kind, std::uint32_t row);
  // The place (category and kind, line, function, file, module, and what tells places without a
  // line apart), packed into one string -> row: once per distinct address.
  std::unordered_map<std::string, std::uint32_t> by_place_;
  std::vector<LastWork> last_work_;                            // by track
  std::size_t task_creates_ = 0;                              // creates given so far
  struct PendingTask {
    std::uint32_t row = 0;
    bool started = false;
    std::uint64_t created = 0;  // ns
    std::uint64_t run = 0;      // ns run so far (its stretches)
  };
  std::unordered_map<std::size_t, PendingTask> task_rows_;  // create number -> its site, until the task ends
};

}  // namespace kob::summary_fold_detail
