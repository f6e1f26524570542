#include "common/support/crash_guard.hpp"

#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iterator>

namespace kob::crash_guard {

namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction g_before[std::size(kCrashSignals)];
sigjmp_buf g_jump;
std::atomic<pid_t> g_guarded{0};

void on_crash(int sig, siginfo_t*, void*) {
  if (gettid() == g_guarded.load()) siglongjmp(g_jump, sig);
  // Another thread's fault: the handlers in force before, and the fault comes again to them.
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    if (kCrashSignals[i] == sig) sigaction(sig, &g_before[i], nullptr);
}

void restore_handlers() {
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &g_before[i], nullptr);
  g_guarded.store(0);
}

}  // namespace

int call(void (*fn)(void*), void* ctx) {
  struct sigaction sa {};
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &sa, &g_before[i]);
  g_guarded.store(gettid());
  const int sig = sigsetjmp(g_jump, 1);
  int result = sig;
  if (sig == 0) {
    try {
      fn(ctx);
    } catch (...) {
      result = kThrew;
    }
  }
  restore_handlers();
  return result;
}

}  // namespace kob::crash_guard
