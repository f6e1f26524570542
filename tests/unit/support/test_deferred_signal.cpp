// A termination signal that arrives inside a deferred_signal::Scope (a thread holding a lock the
// output write needs) is handled only when the outermost Scope ends, once.
#include <doctest/doctest.h>

#include <signal.h>

#include "common/support/deferred_signal.hpp"

namespace {
volatile sig_atomic_t g_handled = 0;
void on_usr1(int sig) {
  if (kob::deferred_signal::defer(sig)) return;
  g_handled = g_handled + 1;
}
}  // namespace

TEST_CASE("deferred signal: raised inside nested scopes, handled once when the outer one ends") {
  struct sigaction sa {}, old{};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
  g_handled = 0;
  {
    const kob::deferred_signal::Scope outer;
    {
      const kob::deferred_signal::Scope inner;
      raise(SIGUSR1);
      CHECK(g_handled == 0);
    }
    CHECK(g_handled == 0);  // still inside the outer scope
  }
  CHECK(g_handled == 1);
  raise(SIGUSR1);  // outside any scope: at once
  CHECK(g_handled == 2);
  CHECK(kob::deferred_signal::t_depth == 0);
  CHECK(kob::deferred_signal::t_pending == 0);
  sigaction(SIGUSR1, &old, nullptr);
}
