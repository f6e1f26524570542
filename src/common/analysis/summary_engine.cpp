#include "common/analysis/summary_engine.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

#include "common/analysis/epoch_plan.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/analysis/summary_fold_state.hpp"
#include "common/analysis/thread_fold.hpp"
#include "common/record/clock.hpp"
#include "common/record/event_decoder.hpp"
#include "common/record/intern.hpp"
#include "common/support/pooled_map.hpp"
#include "common/support/worker_pool.hpp"
#include "common/timeline/memory_levels.hpp"
#include "common/timeline/name_filter.hpp"
#include "common/timeline/target_matcher.hpp"

namespace kob {

struct SummaryEngineAccess {
  using State = SummaryFold::State;
  static State& state(SummaryFold& f) { return *f.s_; }
  static void target_copy(SummaryFold& f, const DeepCopySpan& d) { f.target_copy(d); }
};

namespace {

using namespace engine;
using summary_fold_detail::ConstructRows;
using summary_fold_detail::KernelKey;
using summary_fold_detail::OmpAcc;
using Category = OmpConstructStats::Category;

std::uint64_t overlap(std::uint64_t ws, std::uint64_t we, std::uint64_t from, std::uint64_t to) {
  const std::uint64_t a = std::max(ws, from), b = std::min(we, to);
  return b > a ? b - a : 0;
}

// One constructs-table row's share of a parallel region's work constructs (ConstructRows::work_team).
struct RowShare {
  std::uint32_t row = 0;
  std::uint64_t threads = 0, max_busy = 0, sum_busy = 0, barrier = 0, wait = 0;
};

// A parallel region's implicit tasks as they come (summary_fold_detail::ParallelJoin's figures).
struct Team {
  std::uint32_t tasks = 0, team_size = 0;  // implicit tasks folded, and the team size they report
  std::uint64_t max_busy = 0, sum_busy = 0, task_time = 0, wait_time = 0, max_work = 0, sum_work = 0;
  bool constructs = false, loop = false, tasks_ran = false;
  std::uint32_t creators = 0;  // implicit tasks that created explicit tasks
};

// A parallel region being joined: its row from the thread that ran it, and its team.
struct Join : Team {
  std::uint64_t id = 0;
  bool used = false, have_parallel = false;
  ParallelRow p;
  std::uint32_t construct_row = ConstructRows::kNoRow;
  std::vector<RowShare> shares;  // keeps its capacity when the slot is used again
  void reset() {
    used = have_parallel = false;
    construct_row = ConstructRows::kNoRow;
    static_cast<Team&>(*this) = Team{};
    shares.clear();
  }
};

// A worker's implicit row that a region of two threads can take at once (Engine::join_pair), by
// parallel id: the epoch it came in (the rows live as long as their epoch's join).
struct PairRow {
  std::uint64_t parallel_id = 0, epoch = 0;
  ImplicitRow* row = nullptr;
  SyncPiece* pieces = nullptr;
  const WorkPiece* parts = nullptr;
};

// An explicit task created and not ended yet, by task id (ConstructRows' PendingTask): its
// creation site's row, when it was created, whether it ran yet, and its run so far.
struct LiveTask {
  std::uint32_t row = ConstructRows::kNoRow;
  std::uint32_t flags = 0;
  std::uint64_t created = 0, run = 0;
  bool started = false;
};

// An implicit task whose region's row has not come yet, with what it carries.
struct Pending {
  ImplicitRow row;
  std::vector<SyncPiece> pieces;
  std::vector<WorkPiece> parts;
  std::vector<OpenWait> waits;
  std::vector<OpenSync> syncs;
};

// A construct address met for the first time, for the table's first-seen order.
struct FirstSeen {
  std::uint64_t end = 0;
  std::uint32_t track = 0;
  std::uint64_t seq = 0;
  Category category = Category::Parallel;
  std::uint16_t kind = 0;
  std::uint64_t codeptr = 0;
};

// The target matcher's spans on their way to the fold: a target region's constructs row gets the
// first-seen key of the record that ended it (the row is made as the builder's stream makes it;
// the table's ties go by the key, as for the rows place_constructs makes).
class TargetOut final : public SpanSink {
 public:
  TargetOut(SummaryFold& fold, ConstructRows& rows) : fold_(fold), rows_(rows) {}
  void omp_target(const OmpTargetSpan& x) override {
    fold_.omp_target(x);
    if (x.kernel == 0 && x.deep_copy == 0 && x.codeptr != 0) rows_.seen_first(rows_.known_row(Category::Target, x.kind, x.codeptr), x.end, track, seq);
  }
  void omp_data_op(const OmpDataOpSpan& x) override { fold_.omp_data_op(x); }
  void omp_submit(const OmpSubmitSpan& x) override { fold_.omp_submit(x); }
  void omp_device_op(const OmpDeviceOp& x) override { fold_.omp_device_op(x); }
  std::uint32_t track = 0;  // the record being matched
  std::uint64_t seq = 0;

 private:
  SummaryFold& fold_;
  ConstructRows& rows_;
};

class Engine {
 public:
  Engine(const EngineRun& run, SummaryFold& fold) : run_(run), fold_(fold), st_(SummaryEngineAccess::state(fold)) {
    const std::size_t n = run.threads.size();
    folds_.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      folds_.emplace_back(static_cast<std::uint32_t>(i), run.threads[i]->omp_thread_type, run.omp_runtime_code, run.sources != nullptr,
                          keep_names());
    for (ThreadFold& f : folds_) f.set_damaged(run.damaged);
    if (run.calls != nullptr) {
      fold.set_call_times(run.calls);
      for (ThreadFold& f : folds_) f.keep_calls();
    }
    sync_.resize(n);
    hidden_tracks_.assign(n, 0);
    busy_.assign(n, 0);
    implicit_tasks_.assign(n, 0);
    wait_added_.assign(n, 0);
    wait_taken_.assign(n, 0);
    omp_acc_.resize(n);
    kernel_keys_.resize(n);
    task_queues_.resize(n);
    st_.constructs.set_sources(run.sources);
  }

  bool run(std::string& why);

 private:
  void decline(const std::string& why) {
    if (why_.empty()) why_ = why;
  }
  bool declined() const { return !why_.empty(); }
  // One epoch's rows (one EpochRows per thread) joined. Inlined into the epoch's task: called out
  // of line it took 7 Ir a kernel more (callgrind, the 10^4-kernel trace).
  [[gnu::always_inline]] void join(std::vector<EpochRows>& rows, std::uint64_t horizon);
  [[gnu::noinline]] void place_constructs();  // its own registers: inlined into the join it took 9 Ir a kernel more
  void kernels_inside();
  void parallel_rows();
  void implicit_rows();
  [[gnu::noinline]] void implicit_rows_nested();
  void task_rows(std::uint64_t horizon);
  void task_create(const TaskCreateRow& c);
  [[gnu::noinline]] void end_running_tasks();
  void task_stretch(const TaskStretchRow& k);
  [[gnu::always_inline]] Join* slot(std::uint64_t parallel_id, bool make);  // inlined in the joins (called from three places, it was not)
  void fold_implicit(Join& j, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts, const OpenWait* waits, OpenSync* syncs);
  [[gnu::always_inline]] void cut_task(ImplicitRow& r, std::uint64_t cut);
  [[gnu::always_inline]] bool fold_task(Team& team, const ParallelRow& p, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts);
  void pair_rows();
  [[gnu::always_inline]] bool join_pair(ParallelRow& p);
  template <bool kWork>
  bool join_pair(ParallelRow& p, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts);
  bool end_open_task(ImplicitRow& r, std::uint32_t t, bool other_thread, std::uint64_t cut, const OpenWait* waits, OpenSync* syncs);
  bool end_unended_task(ImplicitRow& r, std::uint32_t t, const OpenWait* waits, OpenSync* syncs, bool quiet);
  // The regions still open at the end (ParallelRow::unended()) complete with the tasks begun in them.
  void complete_unended_regions();
  [[gnu::noinline]] bool widen();
  [[gnu::always_inline]] void own_task(Team& team, std::vector<RowShare>& shares, const ParallelRow& p);
  [[gnu::noinline]] void short_teams(std::uint64_t horizon);
  [[gnu::noinline]] void unended_parallels();  // out of the join's code: rare
  void unended_works();
  void add_row_shares(std::vector<RowShare>& shares, const ImplicitRow& r, const SyncPiece* pieces, const WorkPiece* parts);
  [[gnu::always_inline]] static void add_share(std::vector<RowShare>& shares, std::uint32_t row, std::uint64_t busy, std::uint64_t barrier,
                                               std::uint64_t wait);
  void fold_sync(std::uint32_t track, std::uint16_t kind, bool in_kernel, std::uint64_t codeptr, std::uint64_t dur, std::uint64_t wait);
  void complete(Join& j);
  [[gnu::always_inline]] void finish_region(ParallelRow& p, const Team& j, std::uint32_t construct_row, const std::vector<RowShare>& shares);
  [[gnu::noinline]] OmpAcc* kernel_acc_slow(const ParallelRow& p);
  void ordered(std::uint64_t horizon);
  bool finish_state(Timeline& rest);
  bool finish_target(Timeline& rest);
  bool other_thread_regions();
  void close_unended(std::uint64_t t_end, Timeline& rest);
  void merge_kokkos(const ThreadFold& f);
  void merge_omp(const ThreadFold& f);

  // --include/--exclude's answer for every interned name, made before the folds start (they run on
  // several threads; the filter caches as it goes): nullptr without a filter.
  const std::vector<std::uint8_t>* keep_names() {
    if (run_.filter == nullptr || !run_.filter->active()) return nullptr;
    const std::size_t n = kob::names().size();
    keep_names_.resize(n);
    for (std::uint32_t id = 0; id < n; ++id) keep_names_[id] = run_.filter->keep(id) ? 1 : 0;
    return &keep_names_;
  }

  const EngineRun& run_;
  SummaryFold& fold_;
  std::vector<std::uint8_t> keep_names_;
  OmpAcc left_out_;  // the OpenMP figures of kernels left out by name: summed, never shown
  std::uint64_t filtered_kernels_ = 0, filtered_regions_ = 0;
  std::map<std::string, std::pair<std::uint64_t, std::uint32_t>> region_first_end_;  // by region path: its first call's end, track (merge_kokkos)
  SummaryEngineAccess::State& st_;
  std::string why_;
  std::vector<ThreadFold> folds_;
  std::vector<EpochRows>* rows_ = nullptr;  // the epoch being joined, by track
  // The joins, by parallel id: a ring of a power of two slots, a region in slot id & (size - 1)
  // (the ids are the tool's own counters, so the regions open at once have ids close together);
  // twice as many slots when two open regions meet.
  std::vector<Join> joins_ = std::vector<Join>(64);
  std::size_t join_mask_ = 63;  // joins_.size() - 1, kept: the size is a division by sizeof(Join)
  // The epoch's worker rows that a region of two threads takes at once (pair_rows), by parallel id
  // (a ring of a power of two slots; a row whose slot another takes goes the general way).
  std::vector<PairRow> pairs_;
  std::size_t pair_mask_ = 0;
  std::uint64_t epoch_ = 0;  // the joins so far
  std::vector<RowShare> pair_shares_;  // join_pair's, kept for their capacity
  const std::vector<RowShare> no_shares_;  // a region without work constructs: none to walk
  std::size_t live_ = 0;
  // The first pending_live_ wait for their region; those after are spare, their vectors kept for
  // their capacity (about 50 rows an epoch wait past its end, each took a vector's allocation).
  std::vector<Pending> pending_;
  std::size_t pending_live_ = 0;
  Pending& add_pending() {
    if (pending_live_ == pending_.size()) pending_.emplace_back();
    return pending_[pending_live_++];
  }
  // Explicit tasks by id until they end; the creates and stretches not taken yet (task_rows);
  // creates taken, and whether a stretch ran with no create.
  PooledMap<std::uint64_t, LiveTask> live_tasks_;
  struct TaskQueue {  // a thread's creates and stretches from c and k on, not taken yet
    std::vector<TaskCreateRow> creates;
    std::vector<TaskStretchRow> stretches;
    std::size_t c = 0, k = 0;
  };
  std::vector<TaskQueue> task_queues_;  // by track
  std::uint64_t creates_seen_ = 0;
  std::uint64_t tasks_cancelled_ = 0, tasks_discarded_ = 0;  // Timeline's omp_tasks_cancelled, omp_tasks_discarded
  bool ran_uncreated_ = false;
  // By track: the figures the joins fold (sync regions inside implicit tasks, implicit tasks).
  std::vector<std::array<CountFigure, kKinds>> sync_;
  std::vector<std::uint64_t> busy_, implicit_tasks_, wait_added_, wait_taken_;
  std::vector<std::uint8_t> hidden_tracks_;  // by track: a thread of libomp's hidden-helper team (Track::hidden_helper)
  std::uint32_t hidden_unended_ = 0;         // hidden-helper team regions open at the end (every run with one)
  std::vector<std::vector<OmpAcc*>> omp_acc_;  // by track and kernel part: its row's OpenMP figures
  std::vector<std::vector<KernelSeen>> kernel_keys_;  // by track and kernel part (ThreadFold::kernels' keys)
  // Whether a Kokkos kernel ran during a parallel region: the latest start of the kernels ended so far.
  std::uint64_t latest_kernel_start_ = 0;
  bool kernel_seen_ = false;
  std::vector<OrderedRow> ordered_;  // waiting for the horizon
  std::map<std::uint32_t, std::uint32_t> section_names_;  // id -> interned name
  struct OpenSection {
    std::uint64_t start;
    std::uint32_t track;
  };
  std::map<std::uint32_t, OpenSection> open_sections_;  // by id
  MemoryLevels levels_;
  builder::ProblemCounter problems_;
  // Target offload: the builder's matcher, fed every target record, Kokkos allocation and free in
  // time order (ordered): its spans go to the fold, its record count and devices to finish_state.
  TargetOut target_out_{fold_, st_.constructs};
  Timeline target_rest_;
  builder::Context target_ctx_{target_out_, target_rest_, problems_};
  builder::TargetMatcher target_{target_ctx_, run_.initial_device_num};
  // Kernels by id, from the target regions begun in them: track and kernel part. The OpenMP
  // figures of the regions of a kernel open on another thread (ParallelRow::kOtherThread), by
  // kernel id, go to it at the end (other_thread_regions).
  std::map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> kernel_refs_;
  std::vector<std::pair<std::uint64_t, OmpAcc>> other_thread_acc_;
  bool targets_seen_ = false;  // target records so far: a team may come short (short_teams)
  bool short_teams_ = false;   // or a damaged file, whose lost blocks may hold a team's tasks
  std::uint32_t unended_outside_ = 0;  // parallel regions outside kernels still open at the end
  std::uint64_t run_end_ = 0;
  bool last_join_ = false;  // the join of the last epoch: every fold is done (finish() too)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> unended_ends_;  // by parallel id: the end of a region still open at the end  // the latest time of any thread, once every fold is done (the last join)
  // OpenMP state still open at the end of the run (ParallelRow::unended() and its tasks): each closed
  // (in a run cut short: as cut, Timeline::cut_spans) and named, but a worker's last barrier and its
  // wait (end_unended_task).
  struct OpenOmp {
    std::uint64_t parallels = 0, tasks = 0, syncs = 0, waits = 0, works = 0, masked = 0, spans = 0;
  } open_omp_;
  std::vector<FirstSeen> first_seen_;
  std::vector<std::uint32_t> part_rows_;  // add_row_shares' scratch
};

inline Join* Engine::slot(std::uint64_t id, bool make) {
  for (;;) {
    Join& j = joins_[id & join_mask_];
    if (j.used && j.id == id) return &j;
    if (!make) return nullptr;
    if (!j.used) {
      j.reset();
      j.used = true;
      j.id = id;
      ++live_;
      return &j;
    }
    if (!widen()) return nullptr;
  }
}

// Two regions open at once whose ids meet in the ring: twice the slots, as often as it takes, up
// to kMaxJoinSlots (64 MiB of joins; a damaged file's id can lie anywhere). Regions open further
// apart: false, declined (the builder's path).
bool Engine::widen() {
  constexpr std::size_t kMaxJoinSlots = std::size_t{1} << 18;
  std::size_t size = 2 * joins_.size();
  for (bool fits = false; !fits; size *= 2) {
    if (size > kMaxJoinSlots) {
      decline("parallel regions open too far apart");
      return false;
    }
    std::vector<char> taken(size, 0);
    fits = true;
    for (const Join& o : joins_)
      if (o.used && taken[o.id & (size - 1)]++) fits = false;
    if (fits) break;
  }
  std::vector<Join> wider(size);
  for (Join& o : joins_)
    if (o.used) wider[o.id & (size - 1)] = std::move(o);
  joins_ = std::move(wider);
  join_mask_ = joins_.size() - 1;
  return true;
}

bool Engine::run(std::string& why) {
  const std::size_t n = run_.threads.size();
  // Events dropped (whole chunks: at a cap, or when the writer fell behind) leave spans whose end
  // may be among them: those still open at the end are discarded (ThreadFold::finish). A thread
  // whose records then no longer match (an end whose begin was dropped) declines.
  std::uint64_t dropped = 0;
  for (const ThreadSource* th : run_.threads) dropped += th->dropped;
  const bool lost_ends = dropped > 0;
  // Epochs: every epoch_chunks-th chunk's first tick over all threads bounds one. By default about
  // 8 chunks a thread: an epoch's rows then stay in the caches between its folds and its join
  // (64 a thread took 15 % more CPU with -j 2, and 1-2 % more instructions with -j 1).
  std::vector<std::uint64_t> ticks;
  bool ticks_known = true;
  for (const ThreadSource* th : run_.threads)
    for (std::size_t c = 0; c < th->chunk_count(); ++c) {
      const std::uint64_t t = th->chunk_tick(c);
      ticks_known = ticks_known && t != 0;
      ticks.push_back(t);
    }
  const std::size_t per_epoch = run_.epoch_chunks != 0 ? run_.epoch_chunks : 8 * std::max<std::size_t>(n, 2);
  std::vector<std::uint64_t> bounds;
  if (ticks_known && ticks.size() > per_epoch) {
    std::sort(ticks.begin(), ticks.end());
    for (std::size_t i = per_epoch; i < ticks.size(); i += per_epoch) bounds.push_back(ticks[i]);
  }
  bounds.push_back(UINT64_MAX);
  const clock::Line line = clock::line();
  std::vector<EventDecoder> decoders(n, EventDecoder(line, EventDecoder::SyncSteps::InBegin));  // ThreadFold takes sync regions whole
  std::vector<std::size_t> next(n, 0);
  // The epochs as tasks on up to `jobs` threads (EpochPlan): a program thread's fold of an epoch
  // (each thread's fold is its own: no lock), an epoch's join once all its folds are in. The
  // joins run behind the folds: one core joins epoch k while the others fold k + 1.
  const unsigned shares = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(std::max(run_.jobs, 1u), n)));
  EpochPlan plan(n, bounds.size(), shares);
  std::vector<EventChunk> chunks(shares);
  const auto fold = [&](std::size_t k, std::size_t i, unsigned s) -> const std::string* {
    const ThreadSource& th = *run_.threads[i];
    ThreadFold& f = folds_[i];
    const std::uint64_t bound = bounds[k];
    while (!f.declined() && next[i] < th.chunk_count() && (bound == UINT64_MAX || th.chunk_tick(next[i]) < bound)) {
      th.read_events(next[i]++, decoders[i], chunks[s]);
      if (chunks[s].device_records == 0) [[likely]] f.events(chunks[s].begin(), chunks[s].end());
      else f.events_with_devices(chunks[s].begin(), chunks[s].end());
    }
    const bool last = k + 1 == bounds.size();
    if (last) f.finish(!run_.ended_cleanly, lost_ends);
    if (f.declined()) return &f.why();
    EpochPlan::Slot& slot = plan.slot(k);
    f.hand_over(slot.rows[i], last);
    // Where the thread goes on: the horizon of the epoch's time-ordered facts.
    slot.next_ns[i] = next[i] < th.chunk_count() ? line.to_ns(th.chunk_tick(next[i])) : UINT64_MAX;
    return nullptr;
  };
  const auto join_epoch = [&](std::size_t k) -> const std::string* {
    EpochPlan::Slot& slot = plan.slot(k);
    const bool last = k + 1 == bounds.size();
    std::uint64_t horizon = UINT64_MAX;
    if (!last)
      for (std::uint64_t ns : slot.next_ns) horizon = std::min(horizon, ns);
    else  // every fold is done: the end of the run is known (what a clean end leaves open ends there)
      for (const ThreadFold& f : folds_) run_end_ = std::max(run_end_, f.t_max);
    last_join_ = last;
    join(slot.rows, horizon);
    return declined() ? &why_ : nullptr;
  };
  WorkerPool pool(shares - 1);
  pool.run(shares, [&](unsigned s) { plan.work(s, fold, join_epoch); });
  if (plan.failed()) {
    why = plan.why();
    return false;
  }
  complete_unended_regions();
  if (live_ != 0 || pending_live_ != 0) {
    why = "a parallel region whose team did not complete";
    return false;
  }
  Timeline rest;
  if (!finish_state(rest)) {
    why = why_;
    return false;
  }
  fold_.finish(rest);
  return true;
}

// Rows for construct addresses met first in this epoch, made in the order their first calls
// ended, and each row's first call (ConstructRows::seen_first: the table's ties go by it, whatever
// the epoch a call came in).
void Engine::place_constructs() {
  if (run_.sources == nullptr) return;
  ConstructRows& rows = st_.constructs;
  first_seen_.clear();
  auto consider = [&](std::uint64_t end, std::uint32_t track, std::uint64_t seq, Category c, std::uint16_t kind, std::uint64_t codeptr) {
    if (codeptr == 0) return;
    const std::uint32_t row = rows.known_row(c, kind, codeptr);
    if (row != ConstructRows::kNoRow) rows.seen_first(row, end, track, seq);
    else first_seen_.push_back({end, track, seq, c, kind, codeptr});
  };
  for (const EpochRows& f : *rows_) {
    for (const HitSeen& h : f.hits)
      consider(h.first_end, f.track, h.first_seq, static_cast<Category>(h.kind >> 16), static_cast<std::uint16_t>(h.kind & 0xffff),
               h.codeptr);
    // A thread's regions and pieces come in the order they ended: an address just considered on
    // the thread is not seen earlier by its next call (most regions repeat the one before).
    std::uint64_t last = 0;
    if (f.outside_parallels)
      for (const ParallelRow& p : f.parallels)
        if (p.kernel == 0 && p.codeptr != last) {
          consider(p.end, p.track, p.seq, Category::Parallel, 0, p.codeptr);
          last = p.codeptr;
        }
    last = 0;
    if (f.outside_syncs)
      for (const ImplicitRow& r : f.implicits)
        for (std::uint32_t k = 0; k < r.piece_count; ++k) {
          const SyncPiece& y = f.pieces[r.pieces + k];
          if (!y.in_kernel && summary_fold_detail::explicit_sync(y.kind) && y.codeptr != last) {
            consider(y.end, r.track, 0, Category::Sync, y.kind, y.codeptr);
            last = y.codeptr;
          }
        }
  }
  if (first_seen_.empty()) return;
  std::stable_sort(first_seen_.begin(), first_seen_.end(),
                   [](const FirstSeen& a, const FirstSeen& b) { return std::tie(a.end, a.track, a.seq) < std::tie(b.end, b.track, b.seq); });
  for (const FirstSeen& s : first_seen_) rows.seen_first(rows.row_of(s.category, s.kind, s.codeptr), s.end, s.track, s.seq);
}

// The parallel regions still open at the end (ParallelRow::unended(), the last epoch's): each
// arrives after every span that ended, the Kokkos spans closed with it included (the builder closes
// those first, OmpMatcher::finish these after): its construct row made after the epoch's others,
// "a Kokkos kernel ran during it" answered after the epoch's kernels (kernels_inside). Ended at
// the end of the run after a clean end.
void Engine::unended_parallels() {
  for (EpochRows& f : *rows_)
    for (ParallelRow& p : f.unended_parallels) {
      for (const ThreadFold& g : folds_)
        for (const std::uint64_t id : g.unbegun_parallel_ends)
          if (id == p.id) return decline("a parallel region ended on another thread than its begin's");
      if (!p.hidden) {  // libomp's hidden-helper team outlives the run: no problem line (OmpMatcher::finish)
        ++open_omp_.parallels;
        ++open_omp_.spans;
      }
      Join* j = slot(p.id, true);
      if (j == nullptr) return;
      if (j->have_parallel) return decline("a parallel id ended twice");
      if (p.hidden) {
        hidden_tracks_[p.track] = 1;
        ++hidden_unended_;
      } else if (p.kernel == 0) {
        // Their order among themselves is the builder's hash map's: one outside kernels at most.
        if (unended_outside_++ != 0) return decline("two parallel regions outside kernels open at the end");
        p.kernel_inside = kernel_seen_ && latest_kernel_start_ >= p.start;
        j->construct_row = st_.constructs.row_of(Category::Parallel, 0, p.codeptr);
        st_.constructs.seen_first(j->construct_row, UINT64_MAX, UINT32_MAX, 0);  // after every span that ended
      }
      j->have_parallel = true;
      j->p = p;
      // Its thread's task ended before it (the run ended between the two): one of its team.
      if (p.own_task) own_task(*j, j->shares, p);
      // Its end waits aside until it completes: it cuts none of its tasks (fold_implicit cuts at an
      // end before theirs), each ends where its thread's events end (OmpMatcher::finish).
      unended_ends_.push_back({p.id, run_.ended_cleanly ? std::max(run_end_, p.start) : p.end});
      j->p.end = UINT64_MAX;
    }
  unended_works();
}

// The work constructs still open at the end of their thread's events (ThreadFold::open_works),
// closed as OmpMatcher::finish closes them: at the thread's last event in a run cut short, else at
// the end of the run; each a problem line (none on a hidden-helper thread: close_all_quietly). Its
// thread's figures, its construct's call (the row made after every span that ended, the threads'
// in their order) and its time in its implicit task's part (the region's share of the row,
// ConstructRows::work_team), before the implicit rows are folded.
void Engine::unended_works() {
  const bool cut = !run_.ended_cleanly;
  for (EpochRows& f : *rows_)
    for (std::size_t i = 0; i < f.unended_works.size(); ++i) {
      const UnendedWork& w = f.unended_works[i];
      const std::uint64_t dur = (cut ? w.end : std::max(run_end_, w.start)) - w.start;
      ImplicitRow* task = nullptr;
      for (ImplicitRow& r : f.implicits)
        if (r.open && r.parallel_id == w.parallel_id) task = &r;
      if (task == nullptr || w.part >= task->part_count) return decline("a work construct open at the end outside its implicit task");
      f.parts[task->parts + w.part].busy += dur;
      CountFigure& c = folds_[f.track].work[w.type];
      ++c.count;
      c.total += dur;
      if (!w.quiet) {
        ++(w.type == omp_names::kMasked ? open_omp_.masked : open_omp_.works);
        ++open_omp_.spans;
      }
      if (w.codeptr == 0) continue;
      const std::uint32_t row = st_.constructs.row_of(Category::Work, w.type, w.codeptr);
      st_.constructs.seen_first(row, UINT64_MAX, f.track, i);
      st_.constructs.add_calls(row, 1, dur, 0);
      if (run_.calls != nullptr) st_.constructs.add_call_times(row, &dur, 1);
    }
}

constexpr std::uint32_t kLeagueFlag = 0x40000000;  // ompt_parallel_league

// A region's own thread's implicit task, folded on that thread (ParallelRow::own_task): the first
// of its team.
inline void Engine::own_task(Team& j, std::vector<RowShare>& shares, const ParallelRow& p) {
  const std::uint64_t busy = p.own_dur - std::min(p.own_wait, p.own_dur);
  j.tasks = 1;
  j.team_size = p.own_team_size;
  j.max_busy = j.sum_busy = busy;
  j.task_time = p.own_dur;
  j.wait_time = std::min(p.own_wait, p.own_dur);
  if (!p.own_work) return;
  // Its work construct, as fold_implicit and add_row_shares take a row's one part (no barrier
  // piece names it: the thread folded its syncs).
  j.constructs = true;
  j.loop = p.own_work_loop;
  j.max_work = j.sum_work = p.own_work_busy;
  if (!p.own_work_row) return;
  const std::uint32_t row = st_.constructs.row_of(Category::Work, p.own_work_type, p.own_work_codeptr);
  if (row != ConstructRows::kNoRow) add_share(shares, row, p.own_work_busy, 0, 0);
}

void Engine::parallel_rows() {
  // A region of two threads whose own thread folded its task, and whose worker's row came in the
  // same epoch (closed, with at most one work construct, no explicit task): joined at once
  // (join_pair), without a slot. Not where a team may come short (short_teams_: target records, a
  // damaged file).
  const bool pairs = !short_teams_;
  if (pairs) pair_rows();
  for (EpochRows& f : *rows_)
    for (ParallelRow& p : f.parallels) {
      if (pairs && p.own_task && p.own_team_size == 2 && p.level == 0 && !p.hidden && !p.unended() &&
          !(p.flags & kLeagueFlag) && join_pair(p))
        continue;
      Join* j = slot(p.id, true);
      if (j == nullptr) return;
      if (j->have_parallel) return decline("a parallel id ended twice");
      j->have_parallel = true;
      j->p = p;
      if (p.kernel == 0) j->construct_row = st_.constructs.row_of(Category::Parallel, 0, p.codeptr);
      if (p.own_task) {  // its thread's own implicit task, folded there
        own_task(*j, j->shares, p);
        if (j->tasks == j->team_size) complete(*j);
      } else if (p.flags & kLeagueFlag) [[unlikely]] {
        // A teams construct's league: its threads run initial tasks, none of which joins it (the
        // builder's team of none), so it is complete as it comes.
        complete(*j);
      }
    }
}

[[gnu::always_inline]] inline void Engine::fold_sync(std::uint32_t track, std::uint16_t kind, bool in_kernel, std::uint64_t codeptr, std::uint64_t dur, std::uint64_t wait) {
  CountFigure& c = sync_[track][kind];
  ++c.count;
  c.total += dur;
  c.wait += wait;
  if (run_.sources != nullptr && !in_kernel && codeptr != 0 && summary_fold_detail::explicit_sync(kind)) {
    const std::uint32_t row = st_.constructs.row_of(Category::Sync, kind, codeptr);
    st_.constructs.add_calls(row, 1, dur, wait);
    if (run_.calls != nullptr) st_.constructs.add_call_times(row, &dur, 1);
  }
}

// An implicit task never reported ended: it ends with its region, the waits and syncs open in it too.
bool Engine::end_open_task(ImplicitRow& r, std::uint32_t t, bool other_thread, std::uint64_t cut, const OpenWait* waits, OpenSync* syncs) {
  if (!other_thread || cut < r.start) {
    decline("an implicit task never ended");
    return false;
  }
  for (std::uint32_t w = 0; w < r.open_wait_count; ++w) {
    const OpenWait& ow = waits[w];
    const std::uint64_t e = std::max(cut, ow.start);
    const std::uint64_t d = e - std::min(ow.start, e);
    wait_added_[t] += d;
    r.wait += d;
    r.last_start = ow.start;
    r.last_end = e;
    // The innermost open sync of its kind (syncs[0] is the innermost).
    long y = -1;
    for (std::uint32_t k = 0; k < r.open_sync_count && y < 0; ++k)
      if (syncs[k].kind == ow.kind) y = k;
    for (std::uint32_t k = 0; k < r.open_sync_count && y < 0; ++k)
      if (omp_names::is_barrier(ow.kind) && omp_names::is_barrier(syncs[k].kind)) y = k;
    if (y >= 0) syncs[y].wait += d;
  }
  for (std::uint32_t k = 0; k < r.open_sync_count; ++k) {
    const OpenSync& y = syncs[k];
    const std::uint64_t e = std::max(cut, y.start);
    fold_sync(t, y.kind, y.in_kernel, y.codeptr, e - y.start, y.wait);
  }
  r.end = std::max(cut, r.start);
  return true;
}

// An implicit task still open at the end of the run, in a region still open too: it ends at its
// thread's last event in a run cut short (r.end, from ThreadFold::finish), else at the end of the
// run, the waits and syncs open in it too, each named a problem but a worker's barrier
// (OmpMatcher::finish: libomp reports a worker's last barrier ended only when the next region
// starts).
bool Engine::end_unended_task(ImplicitRow& r, std::uint32_t t, const OpenWait* waits, OpenSync* syncs, bool quiet) {
  if (quiet) return end_open_task(r, t, true, run_end_, waits, syncs);  // the hidden-helper team's: closed silently, at the end
  const bool worker = folds_[t].omp_thread_type == 2;
  const auto worker_barrier = [&](std::uint16_t kind) { return worker && omp_names::worker_last_barrier(kind); };
  for (std::uint32_t k = 0; k < r.open_sync_count; ++k) open_omp_.syncs += worker_barrier(syncs[k].kind) ? 0 : 1;
  for (std::uint32_t w = 0; w < r.open_wait_count; ++w) open_omp_.waits += worker_barrier(waits[w].kind) ? 0 : 1;
  ++open_omp_.tasks;
  open_omp_.spans += 1 + r.open_sync_count;
  if (!end_open_task(r, t, true, run_.ended_cleanly ? run_end_ : r.end, waits, syncs)) return false;
  // An explicit sync region's row (a thread killed in a barrier or taskwait it wrote) is made here
  // when it is its first call: the builder makes it as it closes the thread's syncs, before the
  // region's (OmpMatcher::finish), so it is seen first after every span that ended, by thread.
  for (std::uint32_t k = 0; k < r.open_sync_count; ++k)
    if (run_.sources != nullptr && !syncs[k].in_kernel && syncs[k].codeptr != 0 && summary_fold_detail::explicit_sync(syncs[k].kind))
      st_.constructs.seen_first(st_.constructs.known_row(Category::Sync, syncs[k].kind, syncs[k].codeptr), UINT64_MAX, t, k);
  return true;
}

// Its work constructs with a row, merged by row (one thread's part of each), then the region's
// share of each row (ConstructRows::work_team).
void Engine::add_row_shares(std::vector<RowShare>& shares, const ImplicitRow& r, const SyncPiece* pieces, const WorkPiece* parts) {
  // The barrier ending a part on this thread came as a piece naming it.
  const auto barriers = [&](std::uint32_t part, std::uint64_t& barrier, std::uint64_t& wait) {
    for (std::uint32_t y = 0; y < r.piece_count; ++y)
      if (pieces[y].part == part) {
        const std::uint64_t d = pieces[y].end - pieces[y].start;
        barrier += d;
        wait += std::min(pieces[y].wait, d);
      }
  };
  if (r.part_count <= 1) [[likely]] {  // none, or one construct (a `parallel for`): nothing to merge
    if (r.part_count == 0 || !parts[0].has_row) return;
    const std::uint32_t row = st_.constructs.row_of(Category::Work, parts[0].type, parts[0].codeptr);
    if (row == ConstructRows::kNoRow) return;
    std::uint64_t barrier = 0, wait = 0;
    barriers(0, barrier, wait);
    add_share(shares, row, parts[0].busy, barrier, wait);
    return;
  }
  // Each part's row looked up once (a task may hold several parts of one construct).
  part_rows_.resize(r.part_count);
  for (std::uint32_t k = 0; k < r.part_count; ++k)
    part_rows_[k] = parts[k].has_row ? st_.constructs.row_of(Category::Work, parts[k].type, parts[k].codeptr) : ConstructRows::kNoRow;
  for (std::uint32_t k = 0; k < r.part_count; ++k) {
    const std::uint32_t row = part_rows_[k];
    if (row == ConstructRows::kNoRow) continue;
    std::uint64_t busy_w = 0, barrier = 0, wait = 0;
    bool merged = false;
    for (std::uint32_t m = 0; m < k; ++m) merged = merged || part_rows_[m] == row;
    if (merged) continue;
    for (std::uint32_t m = k; m < r.part_count; ++m) {
      if (part_rows_[m] != row) continue;
      busy_w += parts[m].busy;
      barriers(m, barrier, wait);
    }
    add_share(shares, row, busy_w, barrier, wait);
  }
}

// One thread's part of a row's constructs in the region (its work, their barriers' time and wait).
inline void Engine::add_share(std::vector<RowShare>& shares, std::uint32_t row, std::uint64_t busy, std::uint64_t barrier, std::uint64_t wait) {
  RowShare* s = nullptr;
  for (RowShare& x : shares)
    if (x.row == row) s = &x;
  if (s == nullptr) {
    shares.push_back({row});
    s = &shares.back();
  }
  ++s->threads;
  s->max_busy = std::max(s->max_busy, busy);
  s->sum_busy += busy;
  s->barrier += barrier;
  s->wait += wait;
}

// An implicit task with its region's row known: cut where the region ended when libomp reported
// its end late (OmpMatcher::implicit_end, sync_end, finish), then folded (SummaryFold::
// omp_implicit_task, omp_sync).
void Engine::fold_implicit(Join& j, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts, const OpenWait* waits, OpenSync* syncs) {
  const ParallelRow& p = j.p;
  const std::uint32_t t = r.track;
  const bool other_thread = p.track != t;
  const std::uint64_t cut = p.end;
  if (p.hidden) [[unlikely]]
    hidden_tracks_[t] = 1;  // a thread of libomp's hidden-helper team: its task is in the team's region
  if (r.open) {
    if (p.unended() ? !end_unended_task(r, t, waits, syncs, p.hidden) : !end_open_task(r, t, other_thread, cut, waits, syncs)) return;
  } else if (other_thread) {
    cut_task(r, cut);
  }
  if (fold_task(j, p, r, pieces, parts)) add_row_shares(j.shares, r, pieces, parts);
}

// A closed task on another thread than its region's, whose end libomp reported after the
// region's (OmpMatcher::implicit_end): cut there, its wait after the cut taken off.
inline void Engine::cut_task(ImplicitRow& r, std::uint64_t cut) {
  if (cut < r.start || cut >= r.end) return;
  const std::uint64_t less = overlap(r.last_start, r.last_end, cut, r.end);
  r.wait -= std::min(less, r.wait);
  wait_taken_[r.track] += less;
  r.end = cut;
}

// A row's syncs (cut where its region ended, as its task was) and its task, into its thread's
// figures and its team's; false when declined.
inline bool Engine::fold_task(Team& j, const ParallelRow& p, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts) {
  const std::uint32_t t = r.track;
  const bool other_thread = p.track != t;
  const std::uint64_t cut = p.end;
  for (std::uint32_t k = 0; k < r.piece_count; ++k) {
    SyncPiece& y = pieces[k];
    if (other_thread && y.start <= cut && cut < y.end) {
      const std::uint64_t less = overlap(y.last_start, y.last_end, cut, y.end);
      y.wait -= std::min(less, y.wait);
      y.end = cut;
    }
    fold_sync(t, y.kind, y.in_kernel, y.codeptr, y.end - y.start, y.wait);
  }
  // The task itself.
  const std::uint64_t dur = r.end - r.start;
  const std::uint64_t busy = dur - std::min(r.wait, dur);
  ++implicit_tasks_[t];
  if (r.level == 0) busy_[t] += busy;
  // Its thread's explicit tasks (SummaryFold::omp_implicit_task), then its work constructs.
  std::uint64_t work = r.task_work;
  if (work != 0 || r.created_tasks) [[unlikely]] {
    j.tasks_ran = j.tasks_ran || work != 0;
    j.constructs = j.constructs || work != 0;
    j.creators += r.created_tasks ? 1 : 0;
  }
  for (std::uint32_t k = 0; k < r.part_count; ++k) {
    work += parts[k].busy;
    j.constructs = true;
    j.loop = j.loop || parts[k].loop;
  }
  j.max_work = std::max(j.max_work, work);
  j.sum_work += work;
  ++j.tasks;
  j.max_busy = std::max(j.max_busy, busy);
  j.sum_busy += busy;
  j.task_time += dur;
  j.wait_time += std::min(r.wait, dur);
  if (j.team_size == 0) {
    j.team_size = r.team_size;
  } else if (j.team_size != r.team_size) {
    decline("implicit tasks of one region report different team sizes");
    return false;
  }
  return true;
}

// The epoch's worker rows that join_pair may take: a closed task at level 0 with at most one work
// construct and no explicit task, of a team of two.
void Engine::pair_rows() {
  ++epoch_;  // the slots of the epochs before no longer count
  std::size_t n = 0;
  for (const EpochRows& f : *rows_) n += f.implicits.size();
  if (pairs_.size() < std::max<std::size_t>(64, 2 * n)) {  // a region's lookup always finds a slot
    std::size_t size = 64;
    while (size < 2 * n) size *= 2;
    pairs_.assign(size, PairRow{});
    pair_mask_ = size - 1;
  }
  for (EpochRows& f : *rows_)
    for (ImplicitRow& r : f.implicits)
      if (!r.open && r.level == 0 && r.part_count <= 1 && r.task_work == 0 && !r.created_tasks && r.team_size == 2)
        pairs_[r.parallel_id & pair_mask_] = {r.parallel_id, epoch_, &r, f.pieces.data() + r.pieces, f.parts.data() + r.parts};
}

// A region of two threads (its own task folded on its thread, not hidden, ended) and its worker's
// row from pair_rows: as parallel_rows, implicit_rows and complete would take them one after the
// other, without a slot. False: the row is not there (the general way).
inline bool Engine::join_pair(ParallelRow& p) {
  const PairRow& w = pairs_[p.id & pair_mask_];
  if (w.epoch != epoch_ || w.parallel_id != p.id || w.row->track == p.track) return false;
  ImplicitRow& r = *w.row;
  // Without a work construct (a Kokkos kernel's region) no constructs row takes a share: that
  // code apart, so that the regions without carry none of it.
  if (!p.own_work && r.part_count == 0) return join_pair<false>(p, r, w.pieces, w.parts);
  return join_pair<true>(p, r, w.pieces, w.parts);
}

template <bool kWork>
[[gnu::always_inline]] inline bool Engine::join_pair(ParallelRow& p, ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts) {
  Team team;
  if constexpr (kWork) pair_shares_.clear();
  own_task(team, pair_shares_, p);
  cut_task(r, p.end);
  if (!fold_task(team, p, r, pieces, parts)) return true;  // declined
  if constexpr (kWork) add_row_shares(pair_shares_, r, pieces, parts);
  r.joined = true;
  const std::uint32_t row = p.kernel == 0 ? st_.constructs.row_of(Category::Parallel, 0, p.codeptr) : ConstructRows::kNoRow;
  finish_region(p, team, row, kWork ? pair_shares_ : no_shares_);
  return true;
}

// complete's kernel figures for a part its thread's cache does not hold yet, or for a kernel open
// on another thread (a figure of its own, to the kernel's row at the end: other_thread_regions).
OmpAcc* Engine::kernel_acc_slow(const ParallelRow& p) {
  if (p.kernel_part == ParallelRow::kOtherThread) return &other_thread_acc_.emplace_back(p.kernel, OmpAcc{}).second;
  std::vector<OmpAcc*>& cache = omp_acc_[p.track];
  cache.resize(std::size_t(p.kernel_part) + 1, nullptr);
  const KernelSeen& k = kernel_keys_[p.track][p.kernel_part];
  cache[p.kernel_part] = k.kept ? &st_.omp_kernels[KernelKey{k.name, k.kind, k.space}] : &left_out_;
  return cache[p.kernel_part];
}

// All of a region's implicit tasks are in (and its row): its figures go to its kernel or its
// construct (SummaryFold::omp_parallel, State::complete).
void Engine::complete(Join& j) {
  finish_region(j.p, j, j.construct_row, j.shares);
  j.used = false;
  --live_;
}

// A region's figures, all its implicit tasks in (team): to its kernel or its construct's row.
inline void Engine::finish_region(ParallelRow& p, const Team& j, std::uint32_t construct_row, const std::vector<RowShare>& shares) {
  if (p.end == UINT64_MAX) [[unlikely]]  // still open at the end (unended_region)
    for (const auto& [id, end] : unended_ends_)
      if (id == p.id) p.end = end;
  const std::uint64_t dur = p.end - p.start;
  OmpAcc* kernel_acc = nullptr;
  if (p.kernel == 0) {
    // libomp's hidden-helper team (outside kernels: ThreadFold declines one in a kernel) is the
    // runtime's own, left out of the figures; its work constructs' rows still take their share
    // (the builder's State::complete).
    if (!p.hidden) [[likely]] {
      ++st_.parallel_regions;
      ++st_.outside_regions;
      if (p.level == 0) st_.outside_time += dur;
      if (construct_row != ConstructRows::kNoRow) st_.constructs.add_parallel(construct_row, dur, j.tasks, p.kernel_inside);
    }
  } else {
    ++st_.parallel_regions;
    // The kernel row's OpenMP figures, looked up once per kernel part (a kernel open on another
    // thread: kept apart until the end, other_thread_regions).
    std::vector<OmpAcc*>& cache = omp_acc_[p.track];
    if (p.kernel_part >= cache.size()) [[unlikely]] {
      kernel_acc = kernel_acc_slow(p);
    } else {
      if (cache[p.kernel_part] == nullptr) {
        const KernelSeen& k = kernel_keys_[p.track][p.kernel_part];
        cache[p.kernel_part] = k.kept ? &st_.omp_kernels[KernelKey{k.name, k.kind, k.space}] : &left_out_;
      }
      kernel_acc = cache[p.kernel_part];
    }
    kernel_acc->parallel_regions += 1;
    kernel_acc->team_size_sum += j.tasks;
  }
  if (j.tasks != 0) {
    const bool work = j.constructs;
    OmpAcc r = summary_fold_detail::one_region(j.tasks, work ? j.max_work : j.max_busy, work ? j.sum_work : j.sum_busy, j.task_time,
                                               j.wait_time);
    r.implicit_busy_max = j.max_busy;
    r.construct_regions = j.constructs ? 1 : 0;
    r.loop_regions = j.loop ? 1 : 0;
    if (j.tasks_ran || j.creators != 0) [[unlikely]] {
      r.task_regions = 1;
      r.producer_regions = j.creators == 1 ? 1 : 0;
    }
    r.requested_one = p.requested == 1 ? 1 : 0;
    r.nested_regions = p.level != 0 ? 1 : 0;
    if (kernel_acc != nullptr) kernel_acc->add(r);
    else if (construct_row != ConstructRows::kNoRow) st_.constructs.team(construct_row, r);
  }
  for (const RowShare& s : shares) {
    OmpTeamStats region = summary_fold_detail::one_region(s.threads, s.max_busy, s.sum_busy, s.sum_busy + s.barrier, s.wait);
    region.parallel_regions = 1;
    region.team_size_sum = s.threads;
    st_.constructs.team(s.row, region);
  }
}

// Regions whose team came short of the size its tasks report (a team in an offloaded target
// region whose other thread never began its task, looked for once target records came; or a
// team whose tasks a damaged file lost): the builder's team is the tasks begun by the region's end. Once every thread is past that end (the
// horizon), a task begun in it has come as a row or is still open on its thread
// (EpochRows::open_tasks, its end reported late): with neither, the team is complete.
void Engine::short_teams(std::uint64_t horizon) {
  for (Join& j : joins_) {
    if (!j.used || !j.have_parallel || j.p.end >= horizon) continue;  // unended: UINT64_MAX
    bool open = false;
    for (const EpochRows& f : *rows_)
      for (const std::uint64_t id : f.open_tasks) open = open || id == j.id;
    if (!open) complete(j);
  }
}

void Engine::complete_unended_regions() {
  if (open_omp_.parallels == 0 && hidden_unended_ == 0) return;
  for (Join& j : joins_)
    if (j.used && j.have_parallel && j.p.unended()) complete(j);
}

void Engine::implicit_rows() {
  auto try_fold = [&](ImplicitRow& r, SyncPiece* pieces, const WorkPiece* parts, const OpenWait* waits, OpenSync* syncs) -> bool {
    Join* j = slot(r.parallel_id, false);
    if (j == nullptr || !j->have_parallel) return false;
    fold_implicit(*j, r, pieces, parts, waits, syncs);
    if (!declined() && j->tasks == j->team_size) complete(*j);
    return true;
  };
  implicit_rows_nested();
  // Those still waiting close ranks in one pass (an erase each moved every row after it).
  std::size_t kept = 0;
  for (std::size_t k = 0; k < pending_live_; ++k) {
    Pending& q = pending_[k];
    if (!declined() && try_fold(q.row, q.pieces.data(), q.parts.data(), q.waits.data(), q.syncs.data())) continue;
    if (kept != k) std::swap(pending_[kept], q);  // the folded one's vectors go spare
    ++kept;
  }
  pending_live_ = kept;
  for (EpochRows& f : *rows_) {
    for (ImplicitRow& r : f.implicits) {
      if (r.joined) continue;  // join_pair took it
      if (declined()) return;
      SyncPiece* pieces = f.pieces.data() + r.pieces;
      const WorkPiece* parts = f.parts.data() + r.parts;
      const OpenWait* waits = f.open_waits.data() + r.open_waits;
      OpenSync* syncs = f.open_syncs.data() + r.open_syncs;
      if (try_fold(r, pieces, parts, waits, syncs)) continue;
      Pending& q = add_pending();
      q.row = r;
      q.pieces.assign(pieces, pieces + r.piece_count);
      q.parts.assign(parts, parts + r.part_count);
      q.waits.assign(waits, waits + (r.open ? r.open_wait_count : 0));
      q.syncs.assign(syncs, syncs + (r.open ? r.open_sync_count : 0));
      q.row.pieces = q.row.parts = q.row.open_waits = q.row.open_syncs = 0;
    }
  }
}

// The implicit rows of nested regions (EpochRows::nested_implicits) join the rows waiting for
// their region (pending_), which implicit_rows takes first: out of its loop over the others, which
// they would make dearer.
void Engine::implicit_rows_nested() {
  for (EpochRows& f : *rows_)
    for (ImplicitRow& r : f.nested_implicits) {
      Pending& q = add_pending();
      q.row = r;
      q.pieces.assign(f.nested_pieces.begin() + r.pieces, f.nested_pieces.begin() + r.pieces + r.piece_count);
      q.parts.assign(f.nested_parts.begin() + r.parts, f.nested_parts.begin() + r.parts + r.part_count);
      q.waits.clear();
      q.syncs.clear();
      q.row.pieces = q.row.parts = q.row.open_waits = q.row.open_syncs = 0;
    }
}

// Explicit tasks joined by id, their creates and stretches taken in the order the builder gives
// them (by time, a stretch at its end; ties: the lower track, then the thread's order), as far as
// no thread's later chunk can come before them (the horizon): a task may be created on one thread
// and run on others, in chunks of other epochs. A create makes a live task at its site's row; a
// stretch adds to that row (ConstructRows::task): its time, the first one's delay since the
// create, and at the task's end its whole run as one call (kob diff).
void Engine::task_rows(std::uint64_t horizon) {
  // Each thread's creates and stretches come in its own order, already the merge's: a merge of the
  // queues' heads (a small heap, two a thread) gives the order over all threads. A thread's rows
  // can wait for the horizon for many epochs (a thread whose next chunk starts late).
  for (const EpochRows& f : *rows_) {
    TaskQueue& q = task_queues_[f.track];
    q.creates.insert(q.creates.end(), f.task_creates.begin(), f.task_creates.end());
    q.stretches.insert(q.stretches.end(), f.task_stretches.begin(), f.task_stretches.end());
  }
  if (last_join_) [[unlikely]] end_running_tasks();
  struct Head {
    std::uint64_t time, seq;
    std::uint32_t track;
    bool create;
  };
  const auto after = [](const Head& a, const Head& b) { return std::tie(a.time, a.track, a.seq) > std::tie(b.time, b.track, b.seq); };
  std::vector<Head> heads;
  const auto push = [&](std::uint32_t t, bool create) {
    const TaskQueue& q = task_queues_[t];
    if (create ? q.c == q.creates.size() : q.k == q.stretches.size()) return;
    heads.push_back(create ? Head{q.creates[q.c].time, q.creates[q.c].seq, t, true}
                           : Head{q.stretches[q.k].end, q.stretches[q.k].seq, t, false});
    std::push_heap(heads.begin(), heads.end(), after);
  };
  for (std::uint32_t t = 0; t < task_queues_.size(); ++t) {
    push(t, true);
    push(t, false);
  }
  while (!heads.empty() && heads.front().time < horizon && !declined()) {
    std::pop_heap(heads.begin(), heads.end(), after);
    const Head h = heads.back();
    heads.pop_back();
    TaskQueue& q = task_queues_[h.track];
    if (h.create) task_create(q.creates[q.c++]);
    else task_stretch(q.stretches[q.k++]);
    push(h.track, h.create);
  }
  for (TaskQueue& q : task_queues_) {  // what was taken goes, once it is most of a queue
    if (2 * q.c >= q.creates.size()) {
      q.creates.erase(q.creates.begin(), q.creates.begin() + long(q.c));
      q.c = 0;
    }
    if (2 * q.k >= q.stretches.size()) {
      q.stretches.erase(q.stretches.begin(), q.stretches.begin() + long(q.k));
      q.k = 0;
    }
  }
}

// The last join: the stretches still running at a clean end (TaskStretchRow::kEndOfRun) end at
// the end of the run, now known.
void Engine::end_running_tasks() {
  for (TaskQueue& q : task_queues_)
    for (std::size_t k = q.k; k < q.stretches.size(); ++k)
      if (q.stretches[k].end == TaskStretchRow::kEndOfRun) q.stretches[k].end = std::max(run_end_, q.stretches[k].start);
}

void Engine::task_create(const TaskCreateRow& c) {
  ConstructRows& rows = st_.constructs;
  ++creates_seen_;
  LiveTask t;
  t.row = c.codeptr != 0 ? rows.row_of(Category::Task, 0, c.codeptr) : ConstructRows::kNoRow;
  t.flags = c.flags;
  t.created = c.time;
  if (!live_tasks_.emplace(c.task_id, t).second) return decline("a task_create with a task id already used");
  if (c.prev_codeptr != 0 && rows.row_of(Category::Task, 0, c.prev_codeptr) == t.row) rows.create_gap(t.row, c.gap);
}

void Engine::task_stretch(const TaskStretchRow& k) {
  using summary_fold_detail::kTaskwaitFlag;
  constexpr std::uint32_t kCancel = 3;  // ompt_task_cancel
  auto it = live_tasks_.find(k.task_id);
  if (k.status == kCancel) [[unlikely]] {  // OmpMatcher::schedule_prior: discarded if it never started
    ++tasks_cancelled_;
    if (k.discard) {
      if (it == live_tasks_.end() || !it->second.started) ++tasks_discarded_;
      if (it != live_tasks_.end()) live_tasks_.erase(it);
      return;
    }
  }
  if (it == live_tasks_.end()) {
    ran_uncreated_ = true;
    return;
  }
  LiveTask& t = it->second;
  if (k.taskwait != ((t.flags & kTaskwaitFlag) != 0)) return decline("a taskwait-depend task that ran");
  const bool ends = summary_fold_detail::task_ends(k.status);
  if (t.row != ConstructRows::kNoRow) {
    if (!k.taskwait) {
      const std::uint64_t d = k.end - k.start;
      t.run += d;
      st_.constructs.add_task_stretch(t.row, d, t.started ? 0 : (k.start > t.created ? k.start - t.created : 0), !t.started);
    }
    if (ends && run_.calls != nullptr) st_.constructs.add_call_times(t.row, &t.run, 1);
  }
  if (!k.taskwait) t.started = true;
  if (ends) live_tasks_.erase(it);
}

// Allocations, frees and profile sections in time order over all threads (ties: the lower track
// first), as far as no thread's later chunk can come before them (TimelineBuilder's
// data_record and region_record).
void Engine::ordered(std::uint64_t horizon) {
  for (EpochRows& f : *rows_) ordered_.insert(ordered_.end(), f.ordered.begin(), f.ordered.end());
  if (ordered_.empty()) return;
  std::stable_sort(ordered_.begin(), ordered_.end(),
                   [](const OrderedRow& a, const OrderedRow& b) { return std::tie(a.time, a.track, a.seq) < std::tie(b.time, b.track, b.seq); });
  std::size_t done = 0;
  for (; done < ordered_.size() && ordered_[done].time < horizon && !declined(); ++done) {
    const OrderedRow& r = ordered_[done];
    switch (r.kind) {
      case OrderedRow::Alloc:
      case OrderedRow::Dealloc: {
        MemoryEvent m;
        m.time = r.time;
        m.track = r.track;
        m.alloc = r.kind == OrderedRow::Alloc;
        m.space = r.space;
        m.name = r.name;
        m.ptr = r.ptr;
        m.bytes = r.bytes;
        levels_.account(m, problems_);
        target_.memory(m);  // its allocation's id, for the data ops (AllocLinker)
        fold_.memory(m);
        break;
      }
      case OrderedRow::Target: {
        if (r.kernel_part != kNone) kernel_refs_[fields::OmpTarget::kernel.get(r.event[0])] = {r.track, r.kernel_part};
        target_out_.track = r.track;
        target_out_.seq = r.seq;
        target_.record(r.event[0], r.time, r.track);
        break;
      }
      case OrderedRow::DeepCopy: {
        DeepCopySpan d;
        d.start = r.start;
        d.end = r.time;
        d.track = r.track;
        d.id = r.ptr;
        d.bytes = r.bytes;
        d.dst_space = r.space;
        d.dst_name = r.name;
        d.src_space = r.src_space;
        d.src_name = r.src_name;
        SummaryEngineAccess::target_copy(fold_, d);
        break;
      }
      case OrderedRow::SectionCreate: section_names_[r.space] = r.name; break;
      case OrderedRow::SectionStart:
        if (!open_sections_.emplace(r.space, OpenSection{r.time, r.track}).second) decline("a profile section started twice");
        break;
      case OrderedRow::SectionStop: {
        auto it = open_sections_.find(r.space);
        auto name = section_names_.find(r.space);
        if (it == open_sections_.end() || name == section_names_.end()) {
          decline("a profile section stopped that was not started, or never created");
          break;
        }
        NamedStats& st = st_.sections[name->second];
        ++st.calls;
        st.total += r.time - it->second.start;
        open_sections_.erase(it);
        break;
      }
      case OrderedRow::SectionDestroy: break;
    }
  }
  ordered_.erase(ordered_.begin(), ordered_.begin() + long(done));
}

// Whether a Kokkos kernel ran during each parallel region outside kernels of this epoch, by the
// order the spans ended in (SummaryFold::omp_parallel: the latest start of the kernels given
// before the region): set on the regions' rows.
void Engine::kernels_inside() {
  bool outside = false, kernels = false;
  for (const EpochRows& f : *rows_) {
    if (f.outside_parallels)  // else none is (ThreadFold marks them)
      for (const ParallelRow& p : f.parallels) outside = outside || p.kernel == 0;
    kernels = kernels || !f.kernel_times.empty();
  }
  if (outside && kernels) {
    // The regions in arrival order (few: those outside kernels); each kernel goes to the first
    // region that arrived after it, and a running maximum over the regions answers each. No sort
    // of the kernels (most of the rows).
    struct Region {
      std::uint64_t end, seq;
      std::uint32_t track;
      ParallelRow* row;
      std::uint64_t latest;  // the latest start of the kernels that arrived just before it
      bool seen;
    };
    std::vector<Region> regions;
    for (EpochRows& f : *rows_)
      for (ParallelRow& p : f.parallels)
        if (p.kernel == 0) regions.push_back({p.end, p.seq, p.track, &p, 0, false});
    const auto before = [](std::uint64_t e1, std::uint32_t t1, std::uint64_t s1, const Region& r) {
      return std::tie(e1, t1, s1) < std::tie(r.end, r.track, r.seq);
    };
    std::sort(regions.begin(), regions.end(), [&](const Region& a, const Region& b) { return before(a.end, a.track, a.seq, b); });
    std::uint64_t epoch_latest = latest_kernel_start_;
    for (const EpochRows& f : *rows_)
      for (const KernelTimes& k : f.kernel_times) {
        epoch_latest = std::max(epoch_latest, k.start);
        const auto r = std::partition_point(regions.begin(), regions.end(),
                                            [&](const Region& x) { return !before(k.end, k.track, k.seq, x); });
        if (r == regions.end()) continue;
        r->latest = std::max(r->latest, k.start);
        r->seen = true;
      }
    for (const Region& r : regions) {
      if (r.seen) latest_kernel_start_ = std::max(latest_kernel_start_, r.latest);
      kernel_seen_ = kernel_seen_ || r.seen;
      r.row->kernel_inside = kernel_seen_ && latest_kernel_start_ >= r.row->start;
    }
    latest_kernel_start_ = epoch_latest;
    kernel_seen_ = true;
    return;
  }
  // No kernel ended in this epoch (the latest start so far answers), or no region to answer.
  for (EpochRows& f : *rows_) {
    for (ParallelRow& p : f.parallels)
      if (p.kernel == 0) p.kernel_inside = kernel_seen_ && latest_kernel_start_ >= p.start;
    for (const KernelTimes& k : f.kernel_times) {
      latest_kernel_start_ = std::max(latest_kernel_start_, k.start);
      kernel_seen_ = true;
    }
  }
}

void Engine::join(std::vector<EpochRows>& rows, std::uint64_t horizon) {
  rows_ = &rows;
  for (const EpochRows& f : rows) {
    kernel_keys_[f.track].insert(kernel_keys_[f.track].end(), f.kernels.begin(), f.kernels.end());
    targets_seen_ = targets_seen_ || f.targets;
  }
  short_teams_ = targets_seen_ || run_.damaged;
  place_constructs();
  kernels_inside();
  parallel_rows();
  unended_parallels();
  if (declined()) return;
  implicit_rows();
  if (declined()) return;
  if (live_ != 0 && short_teams_) [[unlikely]] short_teams(horizon);
  task_rows(horizon);
  if (declined()) return;
  ordered(horizon);
  rows_ = nullptr;
}

// One thread's Kokkos figures into the state: kernels, regions (a path per node, from its
// parents' names), fences, MPI calls, deep copies and their sites, counts.
void Engine::merge_kokkos(const ThreadFold& f) {
  const InternTable& names = kob::names();
  for (const KernelPart& k : f.kernels) {
    if (k.calls == 0) continue;
    if (!k.kept) {
      filtered_kernels_ += k.calls;
      continue;
    }
    summary_fold_detail::KernelAcc& a = st_.kernels[KernelKey{k.name, k.kind, k.space}];
    summary_fold_detail::add_track(a.tracks, f.track);
    if (a.calls == 0 || k.first_start < a.first_start) {
      a.first_start = k.first_start;
      a.devid = k.devid;
    }
    a.min = a.calls == 0 ? k.min : std::min(a.min, k.min);
    a.max = std::max(a.max, k.max);
    a.calls += k.calls;
    a.total += k.total;
    if (const std::size_t p = std::size_t(&k - f.kernels.data()); p < f.kernel_calls.size())
      a.durations.insert(a.durations.end(), f.kernel_calls[p].begin(), f.kernel_calls[p].end());
  }
  std::vector<std::string> paths(f.regions.size());
  for (std::size_t r = 0; r < f.regions.size(); ++r) {
    const RegionNode& node = f.regions[r];  // parents come before their children
    // As the builder joins them (timeline_builder.cpp, RegionStack): an empty path (a region
    // named "", or a name a damaged file lost) takes no '/' after it, so "" / "" / "x" is "x".
    paths[r] = node.parent == kNone || paths[node.parent].empty() ? std::string(names.str(node.name))
                                                                   : paths[node.parent] + '/' + names.str(node.name);
    if (node.calls == 0) continue;
    if (!node.kept) {
      filtered_regions_ += node.calls;
      continue;
    }
    summary_fold_detail::RegionAcc& a = st_.regions[paths[r]];
    // Nodes of one path at different depths (empty names nested): the row's depth is that of the
    // node whose call ended first, as the builder's regions come in the order they end (on one
    // thread at one time, the inner first; between threads at one time, the first thread's).
    std::pair<std::uint64_t, std::uint32_t>& first = region_first_end_[paths[r]];
    if (a.st.calls == 0) {
      a.st.path = paths[r];
      a.st.name = names.str(node.name);
      a.st.depth = node.depth;
      first = {node.first_end, f.track};
    } else if (node.depth != a.st.depth &&
               (node.first_end < first.first || (node.first_end == first.first && first.second == f.track && node.depth > a.st.depth))) {
      a.st.depth = node.depth;
      first = {node.first_end, f.track};
    }
    summary_fold_detail::add_track(a.tracks, f.track);
    a.st.calls += node.calls;
    a.st.inclusive += node.inclusive;
    a.st.exclusive += node.exclusive;
    if (r < f.region_calls.size()) a.durations.insert(a.durations.end(), f.region_calls[r].begin(), f.region_calls[r].end());
  }
  const auto add_named = [](std::map<std::uint32_t, NamedStats>& into, const std::map<std::uint32_t, NamedStats>& from) {
    for (const auto& [key, x] : from) {
      NamedStats& s = into[key];
      s.calls += x.calls;
      s.total += x.total;
    }
  };
  add_named(st_.fences, f.fences);
  add_named(st_.mpi_calls, f.mpi_calls);
  for (const auto& [key, x] : f.copies) {
    CopyStats& s = st_.copies[key];
    s.calls += x.calls;
    s.bytes += x.bytes;
    s.time += x.time;
  }
  for (const auto& [key, x] : f.copy_sites) {
    const auto& [dn, sn, ds, ss, bytes] = key;
    CopySiteStats& s = st_.copy_sites[{{dn, sn, ds, ss}, bytes}];
    s.calls += x.first;
    s.time += x.second;
  }
  st_.profile_events += f.profile_events;
  st_.dual_view_syncs += f.dual_view_syncs;
  st_.dual_view_modifies += f.dual_view_modifies;
}

// One thread's OpenMP figures into the state (with what the joins folded for it).
void Engine::merge_omp(const ThreadFold& f) {
  const std::size_t i = f.track;
  summary_fold_detail::OmpTrackAcc& ot = st_.omp_track(f.track);
  ot.initial_tasks += f.initial_tasks;
  ot.implicit_tasks += implicit_tasks_[i] + f.implicit_tasks;
  ot.busy += busy_[i] + f.busy;
  for (std::uint16_t k = 0; k < kKinds; ++k) {
    if (f.work[k].count != 0) {
      OmpCountStats& c = ot.work[k];
      c.count += f.work[k].count;
      c.total += f.work[k].total;
    }
    const std::uint64_t n = f.sync[k].count + sync_[i][k].count;
    if (n != 0) {
      OmpCountStats& c = ot.sync[k];
      c.count += n;
      c.total += f.sync[k].total + sync_[i][k].total;
      c.wait += f.sync[k].wait + sync_[i][k].wait;
    }
    if (f.dispatch[k].count != 0) st_.dispatch[k].count += f.dispatch[k].count;
  }
  OmpSummary& c = st_.counts;
  c.dependences += f.dependences;
  c.tasks_with_dependences += f.tasks_with_dependences;
  c.task_dependences += f.task_dependences;
  c.lock_inits += f.lock_inits;
  c.lock_destroys += f.lock_destroys;
  c.cancels += f.cancels;
  c.flushes += f.flushes;
  c.errors_warning += f.errors_warning;
  c.errors_fatal += f.errors_fatal;
  c.tasks_created += f.tasks_created;
  c.task_stretches += f.task_stretch_count;
  for (std::uint16_t k = 0; k < kKinds; ++k) {
    const MutexFigure& m = f.mutex[k];
    if (!m.seen) continue;
    OmpMutexStats& x = st_.mutex[k];
    x.holds += m.holds;
    x.nested_holds += m.nested_holds;
    x.wait += m.wait;
    x.hold += m.hold;
    x.failed_tries += m.failed_tries;
  }
  for (std::size_t i = 0; i < f.hits.size(); ++i) {
    const ConstructHit& h = f.hits[i];
    const auto category = static_cast<Category>(h.kind >> 16);
    const std::uint32_t row = st_.constructs.row_of(category, static_cast<std::uint16_t>(h.kind & 0xffff), h.codeptr);
    if (category == Category::Mutex) st_.constructs.add_mutex(row, h.calls, h.wait, h.hold, h.nested_holds, h.failed_tries);
    else if (category == Category::Task) st_.constructs.add_task_creates(row, h.calls);
    else st_.constructs.add_calls(row, h.calls, h.total, h.wait);
    if (i < f.hit_calls.size()) st_.constructs.add_call_times(row, f.hit_calls[i].data(), f.hit_calls[i].size());
  }
}

// What is still open at the end of every thread's events, ended as the builder's finish ends it
// (OpenEnd): after a clean end at the end of the run (t_end), after a run cut short at the
// thread's last event (the folds ended theirs already); with the builder's problem lines.
void Engine::close_unended(std::uint64_t t_end, Timeline& rest) {
  const bool cut = !run_.ended_cleanly;
  const builder::OpenEnd end(rest, cut);
  for (ThreadFold& f : folds_) {
    if (!cut) {
      f.close_open(t_end, false);
      f.close_open_mutexes(t_end);
    }
    problems_.add(builder::discarded_unended("a Kokkos kernel"), f.discarded.kernels);
    problems_.add(builder::discarded_unended("a Kokkos fence"), f.discarded.fences);
    problems_.add(builder::discarded_unended("a Kokkos deep copy"), f.discarded.copies);
    problems_.add(builder::discarded_unended("an MPI call"), f.discarded.mpi);
    problems_.add(end.never_ended("a Kokkos kernel"), f.unended.kernels);
    problems_.add(end.never_ended("a Kokkos fence"), f.unended.fences);
    problems_.add(end.never_ended("a Kokkos deep copy"), f.unended.copies);
    problems_.add(end.never_ended("an MPI call"), f.unended.mpi);
    problems_.add(builder::region_never_popped(cut), f.unended.regions);
    problems_.add("OMPT implicit_task end with no begin on that thread: ignored", f.implicit_ends_unbegun);
    problems_.add("OMPT parallel_end with no parallel_begin: ignored", f.parallel_ends_unbegun);
    problems_.add("kokkosp_pop_profile_region with no region open on that thread: ignored", f.region_pops_unpushed);
    problems_.add("OMPT mutex_acquired with no mutex_acquire on that thread: hold shown without a wait", f.mutex_acquired_unasked);
    problems_.add("OMPT mutex_acquire twice without mutex_acquired: the first ignored", f.mutex_asked_twice);
    problems_.add(end.never_ended("an OpenMP mutex hold"), f.holds_cut);
    problems_.add(builder::discarded_unended("an OpenMP mutex hold"), f.holds_discarded);
    problems_.add(end.never_ended("an OpenMP explicit task"), f.unended_tasks);
    problems_.add(end.never_ended("an OpenMP mutex acquire"), f.acquires_unended);
    problems_.add(builder::discarded_unended("an OpenMP mutex acquire"), f.acquires_discarded);
  }
  problems_.add(end.never_ended("an OpenMP sync-region wait"), open_omp_.waits);
  problems_.add(end.never_ended("an OpenMP sync region"), open_omp_.syncs);
  problems_.add(end.never_ended("an OpenMP work construct"), open_omp_.works);
  problems_.add(end.never_ended("an OpenMP masked region"), open_omp_.masked);
  problems_.add(end.never_ended("an OpenMP implicit task"), open_omp_.tasks);
  problems_.add(end.never_ended("an OpenMP parallel region"), open_omp_.parallels);
  if (cut) rest.cut_spans += open_omp_.spans;
  for (const auto& [id, m] : open_sections_) {
    const std::uint64_t stop = cut ? (m.track < folds_.size() ? folds_[m.track].last_ns : t_end) : t_end;
    const auto name = section_names_.find(id);
    NamedStats& st = st_.sections[name == section_names_.end() ? InternTable::kNullName : name->second];
    ++st.calls;
    st.total += std::max(stop, m.start) - m.start;
    problems_.add(builder::section_never_stopped(cut));
    if (cut) ++rest.cut_spans;
  }
  open_sections_.clear();
}

// The target matcher's end, as the builder's: data ops still waiting for an allocation go, and
// the devices seen. Target spans still open, or a deep copy left open in a run with target
// records (the builder's end would credit it its data ops), decline.
bool Engine::finish_target(Timeline& rest) {
  std::uint64_t records = 0;
  bool copies_open = false;
  for (const ThreadFold& f : folds_) {
    records += f.target_records + f.device_records;
    copies_open = copies_open || f.unended.copies != 0 || f.discarded.copies != 0;
  }
  if (records == 0) return true;
  if (target_.spans_open()) {
    why_ = "an OpenMP target region, data op or submit never ended";
    return false;
  }
  if (copies_open) {
    why_ = "a Kokkos deep copy never ended in a run with target offload";
    return false;
  }
  target_.finish(false, builder::OpenEnd(rest, !run_.ended_cleanly));
  rest.omp_target_records = target_rest_.omp_target_records;
  rest.omp_devices = target_rest_.omp_devices;
  return true;
}

// The figures of regions whose kernel is open on another thread, to that kernel's row.
bool Engine::other_thread_regions() {
  for (const auto& [kernel, acc] : other_thread_acc_) {
    const auto ref = kernel_refs_.find(kernel);
    if (ref == kernel_refs_.end()) {
      why_ = "a parallel region of a kernel open on another thread, outside a target region";
      return false;
    }
    const auto [track, part] = ref->second;
    const KernelSeen& k = kernel_keys_[track][part];
    (k.kept ? st_.omp_kernels[KernelKey{k.name, k.kind, k.space}] : left_out_).add(acc);
  }
  return true;
}

bool Engine::finish_state(Timeline& rest) {
  std::uint64_t t_min = UINT64_MAX, t_max = 0;
  // Stretches of lost events: the time line starts (ends) with one lost before (after) every
  // recorded event, as TimelineBuilder::add_thread has it.
  for (std::size_t i = 0; i < run_.threads.size(); ++i) {
    const ThreadSource& th = *run_.threads[i];
    rest.dropped += th.dropped;
    for (const Loss& l : th.losses) {
      rest.lost.push_back({static_cast<std::uint32_t>(i), clock::to_ns(l.first_tick), clock::to_ns(l.last_tick), l.events, l.reason});
      t_min = std::min(t_min, rest.lost.back().start);
      t_max = std::max(t_max, rest.lost.back().end);
    }
  }
  std::sort(rest.lost.begin(), rest.lost.end(),
            [](const LostSpan& a, const LostSpan& b) { return std::tie(a.track, a.start) < std::tie(b.track, b.start); });
  for (const ThreadFold& f : folds_) t_max = std::max(t_max, f.t_max);
  close_unended(t_max, rest);
  if (!finish_target(rest) || !other_thread_regions()) return false;
  for (std::size_t i = 0; i < folds_.size(); ++i) {
    const ThreadFold& f = folds_[i];
    const ThreadSource& th = *run_.threads[i];
    Track tr{th.index, th.os_tid, f.omp_thread_type};
    tr.omp_proc = th.omp_proc;
    tr.dropped = th.dropped;
    tr.omp_place = th.omp_place;
    tr.host_records = f.host_records;
    tr.device_records = f.device_records;
    tr.hidden_helper = hidden_tracks_[i] != 0 || f.hidden_helper;
    tr.last_ns = f.last_ns;
    tr.tool_flushes = f.tool_flushes;
    tr.tool_flush_ns = f.tool_flush_ns;
    const std::uint64_t waits = f.wait_total + wait_added_[i];
    tr.omp_wait_ns = waits - std::min(waits, wait_taken_[i]);
    rest.tracks.push_back(tr);
    rest.omp_records += f.omp_records - f.target_records;
    rest.omp_tasks_completed += f.tasks_completed;
    rest.cut_spans += f.cut_spans;
    t_min = std::min(t_min, f.t_min);
    t_max = std::max(t_max, f.t_max);
    merge_kokkos(f);
    merge_omp(f);
  }
  if (ran_uncreated_ && creates_seen_ != 0) {  // the builder names it a problem
    why_ = "an OpenMP explicit task ran without a task_create";
    return false;
  }
  if (st_.copy_sites.size() > kMaxSites) {
    why_ = "more deep-copy sites than the summary tells apart";
    return false;
  }
  if (t_min > t_max) t_min = t_max = 0;
  rest.t0 = t_min;
  rest.t_end = t_max;
  rest.run_end = run_.run_end;
  rest.cut_short = !run_.ended_cleanly;
  rest.omp_tasks_cancelled = tasks_cancelled_;
  rest.omp_tasks_discarded = tasks_discarded_;
  rest.filtered_kernels = filtered_kernels_;
  rest.filtered_regions = filtered_regions_;
  problems_.flush(rest.problems);
  return true;
}

}  // namespace

EngineChoice engine_choice() {
  const char* v = std::getenv("KOB_ENGINE");
  if (v == nullptr) return EngineChoice::Auto;
  if (std::strcmp(v, "builder") == 0) return EngineChoice::Builder;
  if (std::strcmp(v, "per-thread") == 0) return EngineChoice::PerThread;
  return EngineChoice::Auto;
}

std::optional<Summary> summarize_per_thread(const EngineRun& run, std::string* why) {
  SummaryFold fold;
  fold.set_sources(run.sources);
  fold.set_available_threads(run.available_threads);
  std::string reason;
  Engine engine(run, fold);
  if (!engine.run(reason)) {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  }
  return fold.result();
}

}  // namespace kob
