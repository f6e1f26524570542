// The per-thread engine's schedule (common/analysis/epoch_plan.hpp) on real threads: every fold
// and join runs once; a thread's folds in epoch order; a join after all its epoch's folds and the
// join before it; no fold more than kSlots epochs ahead of the joins, so that a slot's rows are
// still the epoch's when its join reads them; a decline or an exception stops the plan.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/analysis/epoch_plan.hpp"
#include "common/support/worker_pool.hpp"

using kob::WorkerPool;
using kob::engine::EpochPlan;

namespace {

// When each task began and ended, as ticks of one counter (the order the tasks' steps happened in).
struct Log {
  std::atomic<std::uint64_t> tick{0};
  std::mutex mu;
  std::map<std::tuple<char, std::size_t, std::size_t>, std::pair<std::uint64_t, std::uint64_t>> spans;  // (F/J, epoch, thread)
  std::vector<std::tuple<char, std::size_t, std::size_t>> order;  // the tasks by their begin
  int repeats = 0;
  void add(char kind, std::size_t k, std::size_t i, std::uint64_t begin, std::uint64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    if (!spans.emplace(std::make_tuple(kind, k, i), std::make_pair(begin, end)).second) ++repeats;
  }
};

// A fold stamps its slot's row with (epoch, thread); the join checks every row of its slot.
std::uint32_t stamp(std::size_t k, std::size_t i) { return static_cast<std::uint32_t>(k * 1000 + i); }

struct Run {
  std::size_t threads, epochs;
  unsigned shares;
  Log log;
  int bad_rows = 0;  // rows a join found not stamped by its own epoch's folds
};

void run_plan(Run& r) {
  EpochPlan plan(r.threads, r.epochs, r.shares);
  std::atomic<int> bad{0};
  const EpochPlan::Fold fold = [&](std::size_t k, std::size_t i, unsigned) -> const std::string* {
    const std::uint64_t b = r.log.tick.fetch_add(1);
    for (volatile int spin = 0; spin < 200 * static_cast<int>(i + 1); spin = spin + 1) {
    }
    plan.slot(k).rows[i].track = stamp(k, i);
    r.log.add('F', k, i, b, r.log.tick.fetch_add(1));
    return nullptr;
  };
  const EpochPlan::Join join = [&](std::size_t k) -> const std::string* {
    const std::uint64_t b = r.log.tick.fetch_add(1);
    for (std::size_t i = 0; i < r.threads; ++i)
      if (plan.slot(k).rows[i].track != stamp(k, i)) ++bad;
    r.log.add('J', k, 0, b, r.log.tick.fetch_add(1));
    return nullptr;
  };
  WorkerPool pool(r.shares - 1);
  pool.run(r.shares, [&](unsigned s) { plan.work(s, fold, join); });
  CHECK_FALSE(plan.failed());
  r.bad_rows = bad.load();
}

}  // namespace

TEST_CASE("epoch plan: each fold and join once, in the order the joins need, on 1 to 4 threads") {
  for (unsigned shares : {1u, 2u, 3u, 4u})
    for (std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
      CAPTURE(shares);
      CAPTURE(threads);
      Run r{threads, 37, shares, {}, 0};
      run_plan(r);
      auto& s = r.log.spans;
      CHECK(r.log.repeats == 0);
      CHECK(r.bad_rows == 0);
      REQUIRE(s.size() == r.epochs * (threads + 1));
      for (std::size_t k = 0; k < r.epochs; ++k) {
        const auto j = s.at({'J', k, 0});
        for (std::size_t i = 0; i < threads; ++i) {
          const auto f = s.at({'F', k, i});
          CHECK(f.second < j.first);  // the join after its epoch's folds
          if (k > 0) CHECK(s.at({'F', k - 1, i}).second < f.first);  // a thread's folds in order
          if (k >= EpochPlan::kSlots) CHECK(s.at({'J', k - EpochPlan::kSlots, 0}).second < f.first);  // its slot read
        }
        if (k > 0) CHECK(s.at({'J', k - 1, 0}).second < j.first);
      }
      if (shares == 1) {  // one thread: the plain order, epoch by epoch, threads in turn
        std::uint64_t last = 0;
        for (std::size_t k = 0; k < r.epochs; ++k) {
          for (std::size_t i = 0; i < threads; ++i) {
            const auto f = s.at({'F', k, i});
            CHECK(f.first >= last);
            last = f.second;
          }
          CHECK(s.at({'J', k, 0}).first == last + 1);
          last = s.at({'J', k, 0}).second;
        }
      }
    }
}

TEST_CASE("epoch plan: a fold that declines stops it, with the fold's reason; an exception comes out") {
  for (unsigned shares : {1u, 3u}) {
    CAPTURE(shares);
    const std::string reason = "a Kokkos kernel never ended";
    EpochPlan plan(4, 20, shares);
    std::atomic<int> joins_after{0}, folds{0};
    const EpochPlan::Fold fold = [&](std::size_t k, std::size_t i, unsigned) -> const std::string* {
      ++folds;
      return k == 6 && i == 2 ? &reason : nullptr;
    };
    const EpochPlan::Join join = [&](std::size_t k) -> const std::string* {
      if (k >= 6) ++joins_after;
      return nullptr;
    };
    WorkerPool pool(shares - 1);
    pool.run(shares, [&](unsigned s) { plan.work(s, fold, join); });
    CHECK(plan.failed());
    CHECK(plan.why() == reason);
    CHECK(joins_after.load() == 0);  // no join of the epoch that declined, nor after
    CHECK(folds.load() <= 4 * (6 + static_cast<int>(EpochPlan::kSlots)));

    EpochPlan thrown(3, 10, shares);
    const EpochPlan::Fold throws = [&](std::size_t k, std::size_t, unsigned) -> const std::string* {
      if (k == 4) throw std::runtime_error("out of memory, say");
      return nullptr;
    };
    const EpochPlan::Join none = [](std::size_t) -> const std::string* { return nullptr; };
    pool.run(shares, [&](unsigned s) { thrown.work(s, throws, none); });
    CHECK_THROWS_WITH_AS(thrown.failed(), "out of memory, say", std::runtime_error);
  }
}

TEST_CASE("epoch plan: a join that declines stops it, with the join's reason") {
  const std::string reason = "a parallel id ended twice";
  EpochPlan plan(2, 12, 2);
  std::atomic<int> folds_late{0};
  const EpochPlan::Fold fold = [&](std::size_t k, std::size_t, unsigned) -> const std::string* {
    if (k >= 3 + EpochPlan::kSlots) ++folds_late;  // would need the join of epoch 3 done
    return nullptr;
  };
  const EpochPlan::Join join = [&](std::size_t k) -> const std::string* { return k == 3 ? &reason : nullptr; };
  WorkerPool pool(1);
  pool.run(2, [&](unsigned s) { plan.work(s, fold, join); });
  CHECK(plan.failed());
  CHECK(plan.why() == reason);
  CHECK(folds_late.load() == 0);
}
