#include "common/analysis/epoch_plan.hpp"

#include <utility>

namespace kob::engine {

EpochPlan::EpochPlan(std::size_t threads, std::size_t epochs, unsigned shares)
    : threads_(threads), epochs_(epochs), affinity_(shares > 1), folded_(threads, 0), busy_(threads, 0) {
  for (Slot& s : slots_) {
    s.rows.resize(threads);
    s.next_ns.assign(threads, UINT64_MAX);
  }
}

std::size_t EpochPlan::next_fold(std::size_t last) {
  if (!affinity_) last = kNo;
  std::size_t best = kNo;
  for (std::size_t m = 0; m < threads_; ++m) {
    const std::size_t i = (cursor_ + m) % threads_;
    if (busy_[i] || folded_[i] >= epochs_ || folded_[i] >= joined_ + kSlots) continue;
    if (best == kNo || folded_[i] < folded_[best] || (folded_[i] == folded_[best] && i == last)) best = i;
  }
  if (best != kNo && best != last) cursor_ = best + 1;
  return best;
}

void EpochPlan::stop(const std::string* why, std::exception_ptr error) {
  if (!stopped_) {
    stopped_ = true;
    if (why != nullptr) why_ = *why;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

void EpochPlan::work(unsigned share, const Fold& fold, const Join& join) {
  std::unique_lock<std::mutex> lock(mu_);
  std::size_t last = kNo;  // the program thread this share folded last
  while (!stopped_ && joined_ < epochs_) {
    const std::string* why = nullptr;
    std::exception_ptr error;
    if (!joining_ && slot(joined_).folded == threads_) {
      // The join first: it frees a slot, and the joins are the one lane every epoch goes through.
      const std::size_t k = joined_;
      joining_ = true;
      lock.unlock();
      try {
        why = join(k);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      joining_ = false;
      slot(k).folded = 0;
      ++joined_;
    } else if (const std::size_t i = next_fold(last); i != kNo) {
      last = i;
      const std::size_t k = folded_[i];
      busy_[i] = 1;
      lock.unlock();
      try {
        why = fold(k, i, share);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      busy_[i] = 0;
      ++folded_[i];
      ++slot(k).folded;
    } else {
      cv_.wait(lock);
      continue;
    }
    if (why != nullptr || error) stop(why, error);
    else cv_.notify_all();
  }
}

bool EpochPlan::failed() {
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return stopped_;
}

}  // namespace kob::engine
