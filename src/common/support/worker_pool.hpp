// A few threads that share out one job at a time: run(n, fn) calls fn(0) .. fn(n - 1), share 0
// and every (threads + 1)-th one in the caller's thread, the others on the pool's threads, and
// returns when every share is done. The threads block every signal (the program's are for its own
// threads); when one cannot be started, the caller runs its shares.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kob {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned threads = 0) { start(threads); }
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts threads up to `threads` (once; later calls add none).
  void start(unsigned threads);
  unsigned threads() const { return static_cast<unsigned>(threads_.size()); }
  // An exception from a share (any thread) comes out of run() once every share has ended.
  void run(unsigned n, const std::function<void(unsigned)>& fn);

 private:
  void loop(unsigned k);

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned shares_ = 0;
  unsigned running_ = 0;
  std::uint64_t generation_ = 0;
  std::exception_ptr failed_;  // the first exception a share threw on a pool thread
  bool stop_ = false;
};

}  // namespace kob
