#include "common/clock.hpp"

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#if defined(KOB_HAVE_TSC)
#include <cpuid.h>
#endif

namespace kob::clock {

bool g_use_tsc = false;

namespace {
bool g_initialised = false;
std::uint64_t g_tick0 = 0, g_ns0 = 0;
double g_ticks_per_ns = 1.0;

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

void init() {
  if (g_initialised) return;
  g_initialised = true;
  g_use_tsc = tsc_is_invariant();
  g_ns0 = raw_ns();
  g_tick0 = now();
}

void finish_calibration() {
  if (!g_use_tsc) {
    g_ticks_per_ns = 1.0;
    g_tick0 = g_ns0;
    return;
  }
  // Below ~20 ms of baseline the rate error would show as drift between threads' events.
  constexpr std::uint64_t kMinBaselineNs = 20'000'000;
  std::uint64_t ns1 = raw_ns();
  if (ns1 - g_ns0 < kMinBaselineNs) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(kMinBaselineNs - (ns1 - g_ns0)));
  }
  std::uint64_t t1 = now();
  ns1 = raw_ns();
  if (ns1 > g_ns0 && t1 > g_tick0) g_ticks_per_ns = double(t1 - g_tick0) / double(ns1 - g_ns0);
}

std::uint64_t to_ns(std::uint64_t tick) {
  if (!g_use_tsc) return tick;
  const double delta = double(static_cast<std::int64_t>(tick - g_tick0)) / g_ticks_per_ns;
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(g_ns0) + static_cast<std::int64_t>(delta));
}

double ticks_per_ns() { return g_ticks_per_ns; }

const char* name() { return g_use_tsc ? "tsc" : "CLOCK_MONOTONIC_RAW"; }

void set_calibration_for_test(bool tsc, std::uint64_t tick0, std::uint64_t ns0, double rate) {
  g_initialised = true;
  g_use_tsc = tsc;
  g_tick0 = tick0;
  g_ns0 = ns0;
  g_ticks_per_ns = rate;
}

}  // namespace kob::clock
