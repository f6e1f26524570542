// Raw ticks on the hot path; conversion to nanoseconds happens once, at the end of the run.
#pragma once

#include <cstdint>
#include <ctime>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define KOB_HAVE_TSC 1
#endif

namespace kob::clock {

// Set once before any event is recorded; true only when the TSC is invariant (same rate on every
// core, through sleep states), so ticks from different threads are comparable.
extern bool g_use_tsc;

inline std::uint64_t raw_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t now() {
#ifdef KOB_HAVE_TSC
  if (g_use_tsc) return __rdtsc();
#endif
  return raw_ns();
}

// Chooses the clock and takes the first calibration point. Idempotent.
void init();

// Converts ticks to nanoseconds on the CLOCK_MONOTONIC_RAW time line. finish_calibration() must
// have been called first; it takes the second calibration point (waiting briefly if the run was
// too short for a precise rate).
void finish_calibration();
std::uint64_t to_ns(std::uint64_t tick);
double ticks_per_ns();
const char* name();

// For tests: force a linear mapping ns = ns0 + (tick - tick0) / rate.
void set_calibration_for_test(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double ticks_per_ns);

}  // namespace kob::clock
