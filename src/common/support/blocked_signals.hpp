// Threads of the library's own (the raw trace's writer, the trace window's, the signal watcher)
// must never take a signal meant for the program: a handler run there could wait for its own thread.
#pragma once

#include <csignal>

namespace kob {

// Blocks every signal in the calling thread for its lifetime, restoring the mask at the end: wrap
// pthread_create / std::thread of the library's own threads with it (the new thread inherits the mask).
class BlockAllSignals {
 public:
  BlockAllSignals();
  ~BlockAllSignals();
  BlockAllSignals(const BlockAllSignals&) = delete;
  BlockAllSignals& operator=(const BlockAllSignals&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace kob
