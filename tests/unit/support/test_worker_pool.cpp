// The conversion's worker threads: every share run once per job, share 0 in the caller's thread,
// job after job on the same threads.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/support/worker_pool.hpp"

TEST_CASE("worker pool: each share once per job, share 0 in the caller's thread") {
  for (unsigned threads = 0; threads <= 3; ++threads) {
    kob::WorkerPool pool(threads);
    CHECK(pool.threads() == threads);
    for (unsigned n = 0; n <= 9; ++n) {
      for (int job = 0; job < 20; ++job) {
        std::vector<std::atomic<int>> runs(n);
        std::mutex mu;
        std::set<std::thread::id> ids;
        std::thread::id first;
        pool.run(n, [&](unsigned s) {
          runs[s].fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          ids.insert(std::this_thread::get_id());
          if (s == 0) first = std::this_thread::get_id();
        });
        for (unsigned s = 0; s < n; ++s) REQUIRE_MESSAGE(runs[s].load() == 1, threads, " threads, ", n, " shares: share ", s);
        if (n > 0) CHECK(first == std::this_thread::get_id());
        CHECK(ids.size() <= std::min<std::size_t>(n, threads + 1));
      }
    }
  }
}

TEST_CASE("worker pool: start adds threads once") {
  kob::WorkerPool pool;
  CHECK(pool.threads() == 0);
  pool.start(2);
  CHECK(pool.threads() == 2);
  pool.start(5);
  CHECK(pool.threads() == 2);
  std::atomic<int> sum{0};
  pool.run(6, [&](unsigned s) { sum += static_cast<int>(s); });
  CHECK(sum.load() == 15);
}

TEST_CASE("worker pool: a share's exception comes out of run once every share ended, on any thread") {
  kob::WorkerPool pool(2);
  for (unsigned thrower = 0; thrower < 3; ++thrower) {  // share 0 runs in this thread, 1 and 2 on the pool's
    std::atomic<int> ended{0};
    CHECK_THROWS_AS(pool.run(3,
                             [&](unsigned s) {
                               if (s == thrower) throw std::runtime_error("share failed");
                               ++ended;
                             }),
                    std::runtime_error);
    CHECK(ended.load() == 2);
  }
  std::atomic<int> sum{0};
  pool.run(3, [&](unsigned s) { sum += static_cast<int>(s); });  // still works after
  CHECK(sum.load() == 3);
}
