// clock_drift.cpp - how far the library's tick-to-nanosecond translation strays from
// CLOCK_MONOTONIC_RAW over a run, with the calibration the library uses (src/common/record/clock.cpp:
// one calibration point when the tool starts, one when it writes, nothing in between).
//
// Calls clock::init(), then for SECONDS seconds takes a reference every 100 ms (the tightest of
// 5 brackets rdtsc, clock_gettime(CLOCK_MONOTONIC_RAW), rdtsc: the tick at the midpoint and the
// ns read), calls clock::finish_calibration() and prints, over all references, the largest
// |clock::to_ns(tick) - ns| and the widest reference bracket (in ns: part of what is measured is
// the reference's own uncertainty, about half its width).
//
// Usage: clock_drift [SECONDS]     (default 10)
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/record/clock.hpp"

namespace clk = kob::clock;

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  clk::init();
  if (std::string_view(clk::name()) != "tsc") {
    std::printf("clock: %s (no invariant TSC): ticks are nanoseconds, nothing to translate\n", clk::name());
    return 0;
  }
  std::uint64_t (*tick)() = [] { return clk::now(); };
  std::uint64_t (*ns)() = [] { return clk::raw_ns(); };
  std::vector<clk::Point> refs;
  const std::uint64_t start = clk::raw_ns();
  const auto span = static_cast<std::uint64_t>(seconds * 1e9);
  while (clk::raw_ns() - start < span) {
    refs.push_back(clk::take_point(tick, ns, 5));
    const timespec ts{0, 100'000'000};
    nanosleep(&ts, nullptr);
  }
  refs.push_back(clk::take_point(tick, ns, 5));
  clk::finish_calibration();
  double worst = 0, widest = 0, sum = 0;
  for (const clk::Point& p : refs) {
    const double err = double(static_cast<std::int64_t>(clk::to_ns(p.tick) - p.ns));
    worst = std::max(worst, err < 0 ? -err : err);
    sum += err < 0 ? -err : err;
    widest = std::max(widest, double(p.width) / clk::ticks_per_ns());
  }
  std::printf("run: %.1f s, %zu references, rate %.6f ticks/ns\n", double(clk::raw_ns() - start) / 1e9, refs.size(),
              clk::ticks_per_ns());
  std::printf("translated minus CLOCK_MONOTONIC_RAW: max |error| %.0f ns, mean |error| %.0f ns (widest reference bracket %.0f ns)\n",
              worst, sum / double(refs.size()), widest);
  return 0;
}
