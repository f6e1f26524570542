// The per-thread engine's epochs as tasks for a few threads (summary_engine.cpp): a program
// thread's fold of an epoch runs after its fold of the epoch before, an epoch's join after all its
// folds and the join before it. A fold hands its rows to its epoch's slot, and a slot is free again
// once its join has read it, so the folds run up to kSlots epochs ahead of the joins: while one
// core joins epoch k the others fold k + 1 and on. With one thread the order is the plain one
// (epoch k's folds, its join, epoch k + 1's folds...), which keeps the least in memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/analysis/thread_fold.hpp"

namespace kob::engine {

class EpochPlan {
 public:
  static constexpr std::size_t kSlots = 3;
  struct Slot {
    std::vector<EpochRows> rows;         // by program thread
    std::vector<std::uint64_t> next_ns;  // by program thread: where its next epoch begins (UINT64_MAX: none)
    std::size_t folded = 0;              // program threads that handed their rows over
  };
  // A fold or join: nullptr, or why the pass declines (a string that outlives the plan).
  using Fold = std::function<const std::string*(std::size_t epoch, std::size_t thread, unsigned share)>;
  using Join = std::function<const std::string*(std::size_t epoch)>;

  // shares: the threads that will call work() (with one, the folds go in thread order).
  EpochPlan(std::size_t threads, std::size_t epochs, unsigned shares);
  Slot& slot(std::size_t epoch) { return slots_[epoch % kSlots]; }

  // Takes tasks (a join before a fold when both are ready) until every epoch is joined, one
  // declines or one throws; `share` is the caller's (the fold's scratch). Called by each thread
  // of a WorkerPool::run.
  void work(unsigned share, const Fold& fold, const Join& join);
  // After work: whether a task declined (why()); an exception a task threw comes out here.
  bool failed();
  const std::string& why() const { return why_; }

 private:
  // The next program thread with a fold that may start (kNo: none), under mu_: one of the
  // earliest epoch (the next join waits for those), of them `last` (the caller's previous one,
  // whose fold state is in its core's caches) when it may, else the threads in turn.
  std::size_t next_fold(std::size_t last);
  void stop(const std::string* why, std::exception_ptr error);

  static constexpr std::size_t kNo = SIZE_MAX;
  const std::size_t threads_, epochs_;
  const bool affinity_;  // more than one share: a share keeps to its program thread when it may
  Slot slots_[kSlots];
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::size_t> folded_;  // by program thread: its epochs folded
  std::vector<char> busy_;           // by program thread: a fold of it is running
  std::size_t cursor_ = 0;           // where next_fold looks first (the threads in turn)
  std::size_t joined_ = 0;
  bool joining_ = false, stopped_ = false;
  std::string why_;
  std::exception_ptr error_;
};

}  // namespace kob::engine
