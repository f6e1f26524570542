// Raw ticks on the hot path; conversion to nanoseconds happens once, at the end of the run.
#pragma once

#include <cstdint>
#include <string>
#include <ctime>

#include "common/record/hot_flags.hpp"
#include "common/support/hot_path.hpp"
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define KOB_HAVE_TSC 1
#endif

namespace kob::clock {


// KOB_TEST_CLOCK_SHIFT_NS (tests only; 0 otherwise), set by init(): added to every
// CLOCK_MONOTONIC_RAW read, so the whole time line of the run (events, calibration points, the
// wall reference's raw part) moves by exactly that much, with the TSC or without. It lets one MPI
// rank of a run on one host look as if its clock were that far from the others'.
extern std::uint64_t g_shift_ns;

// The tool's time line: CLOCK_MONOTONIC_RAW ns (plus the test shift).
inline std::uint64_t raw_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec) + g_shift_ns;
}

// raw_ns() out of line: the hot path's fallback when there is no invariant TSC.
KOB_SLOW_PATH std::uint64_t slow_now();

inline std::uint64_t now() {
#ifdef KOB_HAVE_TSC
  if (KOB_LIKELY(g_hot.use_tsc)) return __rdtsc();
#endif
  return slow_now();
}

// CLOCK_MONOTONIC_RAW and CLOCK_REALTIME read together (the realtime read between two raw ones,
// the tightest of a few tries): ties the run's time line to the wall clock, so that runs on
// machines whose monotonic clocks are unrelated (MPI ranks on several nodes) can be put on one
// time line without any other reference. As "RAW_NS REALTIME_NS".
std::string wall_reference();

// Chooses the clock and takes the first calibration point. Idempotent.
void init();

// Ticks to nanoseconds on the CLOCK_MONOTONIC_RAW time line, by straight-line interpolation
// between two calibration points: one taken by init(), one by finish_calibration() (each a tick
// read bracketing a clock_gettime, the tightest of a few tries). Every event lies between them, so
// the error stays within the points' own error whatever the length of the run. Nothing waits.
// finish_calibration() must be called before to_ns(); calling it again moves the second point.
void finish_calibration();
std::uint64_t to_ns(std::uint64_t tick);

// to_ns's line as it stands, for a conversion that turns many ticks to ns in a loop (the same
// arithmetic inline, on a copy: it must not move while used).
struct Line {
  bool tsc = false;
  std::uint64_t tick0 = 0, ns0 = 0;
  std::uint64_t whole = 1, frac = 0;  // ns per tick, 64.64 fixed point
  // Inlined: a conversion calls it once per event (a call was a third of its cost).
  [[gnu::always_inline]] std::uint64_t to_ns(std::uint64_t tick) const {
    if (!tsc) return tick;
    return arithmetic_ns(tick);
  }
  // The nearest ns to tick0's plus the ticks since (or before) it over the rate, whatever tsc says.
  [[gnu::always_inline]] std::uint64_t arithmetic_ns(std::uint64_t tick) const { return since_ns(tick - tick0); }
  // arithmetic_ns of the tick `since` ticks after tick0 (mod 2^64, a signed count: before tick0
  // when negative): for a loop that keeps its ticks counted from tick0, one subtraction less a tick.
  // kSubNs: whole is 0 (a tick is under 1 ns: a TSC of 1 GHz and more), one multiplication less.
  template <bool kSubNs = false>
  [[gnu::always_inline]] std::uint64_t since_ns(std::uint64_t since) const {
    return static_cast<std::uint64_t>(fixed_at<kSubNs>(since) >> 64);
  }

  // The line at `since` as a 64.64 fixed-point ns, plus one half (the rounding), mod 2^128: since_ns
  // is its whole part. It moves by step_fixed(s) when since moves by s (s below 2^63), so that a
  // loop walking ticks forward in small steps converts each with one multiplication and no test
  // (EventDecoder): the nearest ns, a half rounded up (also before tick0).
  template <bool kSubNs = false>
  [[gnu::always_inline]] unsigned __int128 fixed_at(std::uint64_t since) const {
    using U = unsigned __int128;
    // since * frac as a signed count: the unsigned product less frac * 2^64 when since < 0.
    const std::uint64_t before = static_cast<std::uint64_t>(static_cast<std::int64_t>(since) >> 63) & frac;
    std::uint64_t high = ns0 - before;
    if constexpr (!kSubNs) high += since * whole;
    return (static_cast<U>(high) << 64) + static_cast<U>(since) * frac + (static_cast<U>(1) << 63);
  }
  template <bool kSubNs = false>
  [[gnu::always_inline]] unsigned __int128 step_fixed(std::uint64_t step) const {
    using U = unsigned __int128;
    if constexpr (kSubNs) return static_cast<U>(step) * frac;
    else return static_cast<U>(step) * frac + (static_cast<U>(step * whole) << 64);
  }
  // The same line as one whose to_ns is arithmetic_ns: a clock that is not the TSC's is the
  // identity line (1 ns a tick from 0), exact for every tick (mod 2^64), so that a loop converting
  // many ticks tests nothing per tick.
  Line arithmetic() const {
    if (tsc) return *this;
    Line l;
    l.tsc = true;
    l.whole = 1;
    return l;
  }
};
Line line();
double ticks_per_ns();
const char* name();

// One calibration point: a tick and the CLOCK_MONOTONIC_RAW ns read at the same moment.
struct Point {
  std::uint64_t tick = 0;
  std::uint64_t ns = 0;
  std::uint64_t width = 0;  // ticks between the two tick reads around the ns read
};
// Of `tries` brackets tick(), ns(), tick(), the narrowest, with the tick at its midpoint.
Point take_point(std::uint64_t (*tick)(), std::uint64_t (*ns)(), int tries);

// The calibration point init() took (with CLOCK_MONOTONIC_RAW ticks: now, width 0), and a fresh
// one taken now, the way init() takes it: for the raw trace's header and CALIB entries.
Point start_point();
Point point_now();

// Sets the mapping ns = ns0 + (tick - tick0) / rate (tsc false: ticks are ns): a raw trace's
// calibration, read back by the converter.
void set_calibration(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double ticks_per_ns);
// For tests: the same.
void set_calibration_for_test(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double ticks_per_ns);
// For tests: read ticks and ns from these functions instead of rdtsc and clock_gettime (nullptr:
// back to the real ones); the clock counts as the TSC.
void set_sources_for_test(std::uint64_t (*tick)(), std::uint64_t (*ns)());

}  // namespace kob::clock
