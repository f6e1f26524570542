#include "common/support/worker_pool.hpp"

#include <exception>
#include <utility>

#include "common/support/blocked_signals.hpp"

namespace kob {

void WorkerPool::start(unsigned threads) {
  if (!threads_.empty()) return;
  try {
    const BlockAllSignals blocked;
    for (unsigned k = 1; k <= threads; ++k) threads_.emplace_back([this, k] { loop(k); });
  } catch (...) {
    // Fewer threads: the caller runs the shares of those missing.
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::run(unsigned n, const std::function<void(unsigned)>& fn) {
  const unsigned stride = threads() + 1;
  if (threads_.empty() || n <= 1) {
    for (unsigned s = 0; s < n; ++s) fn(s);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    shares_ = n;
    running_ = threads();
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr failed;
  try {
    for (unsigned s = 0; s < n; s += stride) fn(s);
  } catch (...) {
    failed = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return running_ == 0; });  // fn is the caller's: no thread may still use it
  job_ = nullptr;
  if (!failed) failed = std::exchange(failed_, nullptr);
  failed_ = nullptr;
  lock.unlock();
  if (failed) std::rethrow_exception(failed);
}

void WorkerPool::loop(unsigned k) {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const std::function<void(unsigned)>* job = job_;
    const unsigned n = shares_, stride = threads() + 1;
    lock.unlock();
    std::exception_ptr failed;
    try {
      for (unsigned s = k; s < n; s += stride) (*job)(s);
    } catch (...) {
      failed = std::current_exception();  // (memory) run() throws it in the caller's thread
    }
    lock.lock();
    if (failed && !failed_) failed_ = failed;
    if (--running_ == 0) done_cv_.notify_all();
  }
}

}  // namespace kob
