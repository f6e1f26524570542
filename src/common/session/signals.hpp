// What the library does when the program is ended by a signal.
//
// SIGTERM, SIGINT, SIGHUP: the normal outputs are written by a watcher thread (the handler itself
// only wakes it and waits, bounded), then the signal ends the process as it would have without
// the tool: the program's own earlier handler is called, or the default action is re-raised.
// SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: one precomputed line naming `kob convert` is written
// to stderr, the previous disposition is restored and the fault recurs under it.
// Nothing is installed for a signal the program ignores.
#pragma once

#include <string>

namespace kob::signals {

struct Options {
  // Writes the outputs; runs on the watcher thread, never inside a handler.
  void (*write)() = nullptr;
  // Async-signal-safe: true when the calling thread is the one writing the outputs now. A signal
  // that interrupts that write is kept until the write ends (end_if_deferred); a second one
  // ends the process at once.
  bool (*writing_here)() = nullptr;
  // How long a handler waits for the write before ending the process without it.
  int write_timeout_ms = 10000;
};

// Starts the watcher thread (when `write` is set and this process has none yet) and installs the
// handlers not installed yet; gives the calling thread an alternate signal stack when it has none
// (stack overflows). False after one warning when the watcher cannot start: the termination
// handlers are then not installed, the crash handlers are.
bool install(const Options& options);

// Called by the thread that wrote the outputs when it has finished: a termination signal that
// arrived on it meanwhile now ends the process as it would have without the tool.
void end_if_deferred();

// Gives the calling thread an alternate signal stack of its own when the crash handlers are
// installed and it has none, so that a stack overflow on any thread still prints the crash line;
// unmapped when the thread ends. Once per thread, when it first records (not a hot path).
void give_thread_alt_stack();

// The crash line's run: PREFIX.kob and the `kob` command found next to the library (or `kob`).
// Precomputed here, read by the crash handler; call again when the prefix changes. An empty path:
// no line (--log-level=off).
void set_crash_line(const std::string& raw_trace_path, const std::string& kob_command);
// The line as the crash handler would print it for `signal_name` (tests).
std::string crash_line(const char* signal_name);

// Tests: the handlers go, the previous dispositions come back (the watcher thread stays).
void reset_for_test();

}  // namespace kob::signals
