// Running a foreign tool's start-up code (a chained Kokkos or OpenMP tool) so that a fault in it
// ends that call, not the program: the tool is then dropped and the run goes on without it.
#pragma once

#include <type_traits>

namespace kob::crash_guard {

// What a guarded call did.
constexpr int kReturned = 0;
constexpr int kThrew = -1;

// Calls fn(ctx) with handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE that jump back here when the
// fault is on this thread (another thread's fault goes to the handlers in force before). Returns
// kReturned, kThrew (a C++ exception left it), or the signal's number. Not SIGABRT: abort() holds
// a lock of glibc's that a jump out of it would keep. One guarded call at a time (start-up only).
int call(void (*fn)(void*), void* ctx);

template <class F>
int call(F&& f) {
  using Fn = std::remove_reference_t<F>;
  return call([](void* c) { (*static_cast<Fn*>(c))(); }, const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace kob::crash_guard
