// Matches the OpenMP records of all threads, in time order, into spans, and hands each on as soon
// as it is final. Begin/end pairs are matched per thread (OMPT reports both on the thread where the
// construct runs); cross-thread links (team sizes, task creation, a mutex released by another
// thread, a worker's region end) are kept only while something can still need them.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/timeline/builder_parts.hpp"
#include "common/record/event.hpp"
#include "common/record/record.hpp"
#include "common/support/pooled_map.hpp"

namespace kob::builder {

class OmpMatcher {
 public:
  OmpMatcher(Context& c, CodeRange runtime_code) : c_(c), runtime_code_(runtime_code) {}

  void add_thread(std::uint32_t track);
  // n records of one track in a row (in time order over all tracks, as the builder gets them).
  // Events [begin, end) of a track (stepped with Event::next()), each at its ns.
  void record_run(const Event* begin, const Event* end, std::size_t n, std::uint32_t track);
  void record(const Event& r, std::uint32_t track) { record_run(&r, r.next(), 1, track); }
  // Closes what is still open (records ended), hands it on, sets the tracks' totals.
  void finish(bool lost_ends, const OpenEnd& open_end);
  // Cross-thread entries kept (for tests: this stays small whatever the run length).
  std::size_t kept() const;
  // Adds what is open now (OpenState says what; can_cut is left to can_cut()).
  void open_state(OpenState& out) const;
  // No explicit task alive, no lock waited for or held.
  bool can_cut() const;

 private:
  static constexpr std::uint32_t kTaskwaitFlag = 0x10;  // ompt_task_taskwait
  static constexpr std::uint32_t kCancel = 3, kEarlyFulfill = 5, kLateFulfill = 6, kSwitch = 7, kTaskwaitComplete = 8;

  struct Wait {
    std::uint16_t kind;
    std::uint64_t start;
  };
  struct Acquire {
    OmpMutexSpan span;
    bool test = false;  // test_lock / test_nest_lock: may fail, then no acquired follows
  };
  struct LastWait {
    std::uint64_t start = 0, end = 0;
  };
  struct ImplicitRec {
    OmpImplicitTaskSpan span;
    LastWait last;  // its last wait (the barrier at its end, for a worker)
  };
  struct SyncRec {
    OmpSyncSpan span;
    LastWait last;
  };
  struct ThreadState {
    std::uint32_t track = 0;
    std::vector<ImplicitRec> implicit;
    std::vector<OmpWorkSpan> work;
    std::vector<SyncRec> sync;
    std::vector<Wait> waits;
    PooledMap<std::uint64_t, OmpTaskSpan> running;
    std::vector<Acquire> acquiring;
    std::vector<OmpMutexSpan> holds;  // outer holds and nested nest-lock holds
    std::unordered_map<std::uint64_t, std::uint64_t> taskwait_creates;  // taskwait-depend task id -> creation
    std::uint64_t wait_total = 0;

    std::uint32_t open_implicit() const;
    long find_mutex(const std::vector<Acquire>& v, std::uint16_t fam, std::uint64_t wait_id) const;
    void add_wait(std::uint16_t kind, std::uint64_t start, std::uint64_t end);
  };
  // A parallel region's team, from its first implicit task until its last implicit task ended.
  struct Team {
    std::uint32_t begun = 0, ended = 0;  // its implicit tasks (initial tasks excluded)
    bool region_ended = false;
    std::uint64_t region_end = 0;         // ns, once region_ended
    std::uint32_t region_track = 0;
  };
  // A created explicit task, until it completes or is cancelled.
  struct Created {
    std::size_t ordinal = 0;  // its number among the creates handed on
    std::uint32_t flags = 0;
    std::uint64_t kernel = 0;
  };

  void record_in(ThreadState& s, const Event& r, std::uint64_t ns, std::uint32_t track);
  // record_in's cases that take more than a call (the frequent ones inlined into its loop).
  void implicit_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track);
  void work_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track);
  void work_end(const Event& r, std::uint64_t ns, ThreadState& s);
  void instant(const Event& r, std::uint64_t ns, std::uint32_t track);
  void sync_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track);
  void sync_wait_end(const Event& r, std::uint64_t ns, ThreadState& s);
  void task_create(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track);
  void task_schedule(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track);
  void parallel_begin(const Event& r, std::uint64_t ns, ThreadState& s);
  void parallel_end(const Event& r, std::uint64_t ns);
  void implicit_end(const Event& r, std::uint64_t ns, ThreadState& s);
  void sync_end(const Event& r, std::uint64_t ns, ThreadState& s);
  void schedule_prior(ThreadState& s, std::uint64_t ns, std::uint64_t prior, std::uint32_t status, std::uint64_t next);
  void mutex_record(const Event& r, std::uint64_t ns, ThreadState& s);
  // mutex_record, by event: the wait begins, the hold begins, the hold ends, a nest lock set again
  // (or unset once) by the thread holding it.
  void mutex_acquire(const Event& r, std::uint64_t ns, ThreadState& s);
  void mutex_acquired(const Event& r, std::uint64_t ns, ThreadState& s);
  void mutex_released(const Event& r, std::uint64_t ns, ThreadState& s);
  void nest_lock(const Event& r, std::uint64_t ns, ThreadState& s);
  void foreign_release(std::uint64_t ns, std::uint16_t kind, std::uint64_t wait_id);
  void failed_try(const OmpMutexSpan& acquire);
  void give_task(OmpTaskSpan k);
  void task_done(std::uint64_t id);
  // When libomp reported a worker's implicit task end late (at the next region): where its region
  // ended, if that lies in [start, end); else 0.
  std::uint64_t cut_of(const OmpImplicitTaskSpan& i, std::uint64_t end) const;
  void team_task_ended(std::uint64_t parallel_id);
  void close_all_quietly(ThreadState& s, bool lost_ends);
  template <class S>
  S close_open(S s) const;

  Context& c_;
  const CodeRange runtime_code_;  // the OpenMP runtime's own code: its hidden-helper team
  const OpenEnd* end_ = nullptr;  // set by finish
  std::deque<ThreadState> threads_;  // by track (a deque: they never move)
  std::vector<ThreadState*> by_track_;  // threads_[track], one load per record (a deque's index is not)
  PooledMap<std::uint64_t, OmpParallelSpan> open_parallels_;
  PooledMap<std::uint64_t, Team> teams_;
  std::unordered_set<std::uint64_t> hidden_regions_;  // libomp's hidden-helper team regions
  PooledMap<std::uint64_t, Created> created_;
  std::size_t creates_ = 0;
  bool ran_uncreated_ = false;
  std::unordered_set<std::uint64_t> started_;         // running or suspended tasks (named as next)
  std::unordered_set<std::uint64_t> early_fulfilled_;  // completed by early_fulfill, their `complete` still to come
};

}  // namespace kob::builder
