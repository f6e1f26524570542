// A termination signal that arrives while its thread holds one of the tool's locks (a flush of its
// own slots, a new thread's registration, a new name) waits until the thread lets go: the outputs
// are written by another thread (session/signals.cpp's watcher), which needs those locks, while the
// interrupted thread waits in its handler for that write. Without this the watcher waited for a
// thread that waited for it, and the handler's time limit ended the process without its files.
#pragma once

#include <signal.h>

namespace kob::deferred_signal {

// initial-exec like the recorder's own TLS: no lookup, and room in a dlopen's static TLS.
extern constinit thread_local int t_depth __attribute__((tls_model("initial-exec")));
extern constinit thread_local int t_pending __attribute__((tls_model("initial-exec")));

// Around a slow path that takes a lock the output write takes too. Nests.
class Scope {
 public:
  Scope() { ++t_depth; }
  ~Scope() {
    if (--t_depth == 0 && t_pending != 0) {
      const int sig = t_pending;
      t_pending = 0;
      raise(sig);  // the handler again, now that nothing here holds a lock
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// For a termination handler (async-signal-safe): true when this thread is inside a Scope; the
// signal is then kept and raised again when the outermost Scope ends.
inline bool defer(int sig) {
  if (t_depth == 0) return false;
  t_pending = sig;
  return true;
}

}  // namespace kob::deferred_signal
