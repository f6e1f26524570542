// A foreign start-up function that faults or throws ends that call only (common/support/crash_guard).
#include <doctest/doctest.h>

#include <csignal>
#include <stdexcept>

#include "common/support/crash_guard.hpp"

namespace cg = kob::crash_guard;

TEST_CASE("a guarded call that returns, throws or faults") {
  int ran = 0;
  CHECK(cg::call([&] { ++ran; }) == cg::kReturned);
  CHECK(ran == 1);
  CHECK(cg::call([] { throw std::runtime_error("x"); }) == cg::kThrew);
#if !defined(__SANITIZE_THREAD__) && !(defined(__has_feature) && __has_feature(thread_sanitizer))
  // ThreadSanitizer delivers raised signals late, outside the call.
  CHECK(cg::call([] { std::raise(SIGFPE); }) == SIGFPE);
  CHECK(cg::call([] { std::raise(SIGSEGV); }) == SIGSEGV);
  // The handlers in force before are back: a second call still works.
  CHECK(cg::call([&] { ++ran; }) == cg::kReturned);
  CHECK(ran == 2);
#endif
}
