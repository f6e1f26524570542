// The writer thread of the raw trace, in the idle scheduling class: when a producer fills a slot (and
// every 50 ms anyway) it copies each thread's full ring slots to the end of the file as COMPACT
// blocks and hands them back, writes THREAD entries when a thread's identity changes, and a CALIB
// entry every second. A producer that finds its next slot not yet copied copies its own.
#pragma once

#include <cstdint>

namespace kob {
class ThreadBuffer;
}

namespace kob::raw::writer {

// Starts the thread (its signals blocked: the program's handlers never run on it). False when it
// cannot be started; producers then copy their own slots.
bool start();
// Stops it after one last pass and joins it. Nothing when it does not run.
void stop();
bool running();
// A producer filled a slot: wakes the thread now instead of at its next tick.
void wake();
// Copies b's full slots, oldest first, and frees them; with `final`, also the committed records of
// the slot being filled (left as it is). Runs on the writer thread, in finish(), or on a producer
// in a process without a writer thread, or on a producer whose next slot the writer has not freed
// yet. Returns the records copied.
std::uint32_t copy_thread(ThreadBuffer& b, bool final);
// Tests: a paused writer copies nothing (producers then copy their own slots). Default false.
void pause_for_test(bool paused);
// The forked child has no writer thread: forget the parent's without touching it.
void after_fork_child();

}  // namespace kob::raw::writer
