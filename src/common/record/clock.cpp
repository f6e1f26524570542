#include "common/record/clock.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#if defined(KOB_HAVE_TSC)
#include <cpuid.h>
#endif

namespace kob::clock {

std::uint64_t g_shift_ns = 0;

std::uint64_t slow_now() { return raw_ns(); }

namespace {
// Tries per calibration point: the first may pay for a cold clock_gettime (vDSO page, cache);
// an interrupt or a preemption widens one try, rarely two in a row.
constexpr int kTries = 5;

bool g_initialised = false;
std::uint64_t g_tick0 = 0, g_ns0 = 0;
double g_ticks_per_ns = 1.0;
// Its inverse, ns per tick, in 64.64 fixed point (whole part, 64 bits of fraction): to_ns runs
// once per record of a conversion, and two multiplications cost a fraction of a division.
std::uint64_t g_ns_per_tick_whole = 1, g_ns_per_tick_frac = 0;
Point g_start;

void set_rate(double ticks_per_ns) {
  g_ticks_per_ns = ticks_per_ns;
  const long double inv = 1.0L / static_cast<long double>(ticks_per_ns);
  const long double whole = std::floor(inv);
  g_ns_per_tick_whole = static_cast<std::uint64_t>(whole);
  const long double frac = std::ldexp(inv - whole, 64);  // below 2^64 but for rounding
  g_ns_per_tick_frac = frac < 0x1p64L ? static_cast<std::uint64_t>(frac) : ~std::uint64_t(0);
}

std::uint64_t tsc_ticks() {
#if defined(KOB_HAVE_TSC)
  return __rdtsc();
#else
  return raw_ns();
#endif
}
std::uint64_t raw_ns_fn() { return raw_ns(); }
std::uint64_t (*g_tick_source)() = tsc_ticks;
std::uint64_t (*g_ns_source)() = raw_ns_fn;
bool g_sources_injected = false;

bool tsc_is_invariant() {
#if defined(KOB_HAVE_TSC)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u) {
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    if (d & (1u << 8)) return true;
  }
  // Hypervisors and binary translators (valgrind) may hide the CPUID leaf; the kernel's flags
  // tell the truth about the real processor.
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}
}  // namespace

Point take_point(std::uint64_t (*tick)(), std::uint64_t (*ns)(), int tries) {
  Point best;
  bool have = false;
  for (int i = 0; i < tries; ++i) {
    const std::uint64_t t0 = tick();
    const std::uint64_t n = ns();
    const std::uint64_t t1 = tick();
    if (t1 < t0) continue;  // not a bracket (a tick source going back): no information
    if (!have || t1 - t0 < best.width) {
      best = {t0 + (t1 - t0) / 2, n, t1 - t0};
      have = true;
    }
  }
  if (!have) {
    const std::uint64_t n = ns();
    best = {tick(), n, 0};
  }
  return best;
}

// KOB_TEST_CLOCK_SHIFT_NS: a signed decimal number of ns (anything else: no shift). Unsigned
// arithmetic wraps, so a negative shift subtracts.
static std::uint64_t shift_from_environment() {
  const char* v = std::getenv("KOB_TEST_CLOCK_SHIFT_NS");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return *end == '\0' ? static_cast<std::uint64_t>(n) : 0;
}

void init() {
  if (g_initialised) return;
  g_initialised = true;
  g_shift_ns = shift_from_environment();
  g_hot.use_tsc = g_sources_injected || tsc_is_invariant();
  if (g_hot.use_tsc) g_start = take_point(g_tick_source, g_ns_source, kTries);
}

Point start_point() {
  if (g_hot.use_tsc) return g_start;
  const std::uint64_t n = raw_ns();
  return {n, n, 0};
}

Point point_now() {
  if (!g_hot.use_tsc) {
    const std::uint64_t n = raw_ns();
    return {n, n, 0};
  }
  return take_point(g_tick_source, g_ns_source, kTries);
}

void finish_calibration() {
  if (!g_hot.use_tsc) {
    set_rate(1.0);
    g_tick0 = g_ns0 = 0;
    return;
  }
  const Point end = take_point(g_tick_source, g_ns_source, kTries);
  g_tick0 = g_start.tick;
  g_ns0 = g_start.ns;
  // A degenerate pair (no time between the points) keeps the previous rate: no event lies
  // between two points that close, so no event depends on it.
  if (end.ns > g_start.ns && end.tick > g_start.tick) set_rate(double(end.tick - g_start.tick) / double(end.ns - g_start.ns));
}

Line line() { return {g_hot.use_tsc, g_tick0, g_ns0, g_ns_per_tick_whole, g_ns_per_tick_frac}; }

std::uint64_t to_ns(std::uint64_t tick) { return line().to_ns(tick); }

double ticks_per_ns() { return g_ticks_per_ns; }

std::string wall_reference() {
  std::uint64_t best_width = ~std::uint64_t(0), raw = 0, real = 0;
  for (int i = 0; i < kTries; ++i) {
    const std::uint64_t a = raw_ns();
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const std::uint64_t b = raw_ns();
    if (b - a < best_width) {
      best_width = b - a;
      raw = a + (b - a) / 2;
      real = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
    }
  }
  return std::to_string(raw) + " " + std::to_string(real);
}

const char* name() { return g_hot.use_tsc ? "tsc" : "CLOCK_MONOTONIC_RAW"; }

void set_calibration(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double rate) {
  // In the library this runs in the writer (at exit or on a signal) while the program's threads
  // still record, reading g_hot.use_tsc in now(): the file's clock is ours there, so nothing that
  // now() reads is written (ThreadSanitizer saw the unconditional store race with them).
  if (!g_initialised) g_initialised = true;
  if (g_hot.use_tsc != tsc) g_hot.use_tsc = tsc;
  g_tick0 = tick0;
  g_ns0 = ns0;
  set_rate(rate > 0 ? rate : 1.0);
}

void set_calibration_for_test(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double rate) {
  set_calibration(tsc, tick0, ns0, rate);
}

void set_sources_for_test(std::uint64_t (*tick)(), std::uint64_t (*ns)()) {
  g_tick_source = tick != nullptr ? tick : tsc_ticks;
  g_ns_source = ns != nullptr ? ns : raw_ns_fn;
  g_sources_injected = tick != nullptr || ns != nullptr;
  g_initialised = false;
}

}  // namespace kob::clock
