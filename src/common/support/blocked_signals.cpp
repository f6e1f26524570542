#include "common/support/blocked_signals.hpp"

#include <pthread.h>

namespace kob {

BlockAllSignals::BlockAllSignals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved_);
}

BlockAllSignals::~BlockAllSignals() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

}  // namespace kob
