// Clock calibration: the arithmetic of the two calibration points on synthetic time sources, and
// that calibrating reads the time a bounded number of times (it never waits for time to pass).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <cstdint>
#include <string>
#include <vector>

#include "common/record/clock.hpp"

namespace {
namespace clk = kob::clock;

// A synthetic machine: true time advances 1 ns per read of either source; ticks run at
// kRate per ns from kTickOffset.
constexpr std::uint64_t kRate = 3, kTickOffset = 1'000'000'007;
std::uint64_t g_true_ns = 0;
int g_reads = 0;
std::uint64_t fake_ns() {
  ++g_reads;
  return ++g_true_ns;
}
std::uint64_t fake_tick() {
  ++g_reads;
  return kTickOffset + kRate * ++g_true_ns;
}

// Scripted sources for take_point.
std::vector<std::uint64_t> g_ticks, g_nss;
std::size_t g_ti = 0, g_ni = 0;
std::uint64_t script_tick() { return g_ticks.at(g_ti++); }
std::uint64_t script_ns() { return g_nss.at(g_ni++); }

struct FakeSources {
  FakeSources() {
    g_true_ns = 5'000;
    g_reads = 0;
    clk::set_sources_for_test(fake_tick, fake_ns);
  }
  ~FakeSources() {
    clk::set_sources_for_test(nullptr, nullptr);
    clk::set_calibration_for_test(false, 0, 0, 1.0);
  }
};
}  // namespace

TEST_CASE("clock: a calibration point is the narrowest bracket, the tick at its midpoint") {
  g_ticks = {100, 130, 200, 210, 300, 340, 400, 416};
  g_nss = {1000, 2000, 3000, 4000};
  g_ti = g_ni = 0;
  const clk::Point p = clk::take_point(script_tick, script_ns, 4);
  CHECK(p.tick == 205);
  CHECK(p.ns == 2000);
  CHECK(p.width == 10);
  CHECK(g_ti == 8);
  CHECK(g_ni == 4);
}

TEST_CASE("clock: a bracket whose second tick is before its first is not used") {
  g_ticks = {500, 400, 600, 650};
  g_nss = {7000, 8000};
  g_ti = g_ni = 0;
  const clk::Point p = clk::take_point(script_tick, script_ns, 2);
  CHECK(p.tick == 625);
  CHECK(p.ns == 8000);
  CHECK(p.width == 50);
}

TEST_CASE("clock: ticks between the start and finish points translate exactly on a linear clock") {
  FakeSources fake;
  clk::init();
  CHECK(std::string(clk::name()) == "tsc");
  // The events of the run, then the finish point.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> events;  // (tick, true ns)
  for (int i = 0; i < 100; ++i) {
    g_true_ns += 977;  // time passing between events
    const std::uint64_t t = fake_tick();
    events.emplace_back(t, g_true_ns);
  }
  clk::finish_calibration();
  CHECK(clk::ticks_per_ns() == doctest::Approx(double(kRate)).epsilon(1e-12));
  for (const auto& [tick, ns] : events) CHECK(clk::to_ns(tick) == ns);
}

TEST_CASE("clock: a run of a few hundred nanoseconds still gets the exact rate") {
  FakeSources fake;
  clk::init();
  const std::uint64_t t = fake_tick();
  const std::uint64_t ns = g_true_ns;
  clk::finish_calibration();  // about 30 ns of synthetic time after init
  CHECK(clk::ticks_per_ns() == doctest::Approx(double(kRate)).epsilon(1e-12));
  CHECK(clk::to_ns(t) == ns);
}

TEST_CASE("clock: calibrating reads the time a fixed, small number of times and never waits for it") {
  // A calibration that waited for a minimum baseline would poll the sources until the synthetic
  // time (1 ns per read) had advanced that far: millions of reads. (A sleep would not show here;
  // check_clock_no_sleep.py checks that clock.cpp calls no sleeping function.)
  FakeSources fake;
  clk::init();
  const int after_init = g_reads;
  CHECK(after_init > 0);
  CHECK(after_init <= 20);
  clk::finish_calibration();
  CHECK(g_reads - after_init == after_init);  // the same few reads as the start point
}

TEST_CASE("clock: without an invariant TSC, ticks are CLOCK_MONOTONIC_RAW nanoseconds") {
  clk::set_calibration_for_test(false, 0, 0, 1.0);
  clk::finish_calibration();
  CHECK(std::string(clk::name()) == "CLOCK_MONOTONIC_RAW");
  CHECK(clk::to_ns(123456789) == 123456789);
}

TEST_CASE("clock: ticks translate to the nearest nanosecond at any rate, before and after the reference tick") {
  clk::set_calibration_for_test(true, 10'000, 1'000'000, 2.5);  // 2.5 ticks per ns
  CHECK(clk::to_ns(10'000) == 1'000'000);
  CHECK(clk::to_ns(10'001) == 1'000'000);  // 0.4 ns
  CHECK(clk::to_ns(10'003) == 1'000'001);  // 1.2 ns
  CHECK(clk::to_ns(10'004) == 1'000'002);  // 1.6 ns
  CHECK(clk::to_ns(9'996) == 999'998);     // -1.6 ns
  CHECK(clk::to_ns(10'000 + 2'500'000'000'000'000) == 1'000'000 + 1'000'000'000'000'000);  // 11.6 days of ticks
  // Against the exact quotient, over a spread of rates and distances.
  for (const double rate : {0.37, 1.0, 1.9999999, 2.2, 3.0, 3.6000001}) {
    clk::set_calibration_for_test(true, 1'000'000'000'000, 5'000'000'000'000, rate);
    for (std::uint64_t d = 1; d < 4'000'000'000'000'000; d = d * 7 + 3) {
      for (const bool back : {false, true}) {
        if (back && d > 1'000'000'000'000) continue;
        const long double exact = static_cast<long double>(d) / static_cast<long double>(rate);
        const std::uint64_t got = clk::to_ns(back ? 1'000'000'000'000 - d : 1'000'000'000'000 + d);
        const long double want = back ? 5'000'000'000'000.0L - exact : 5'000'000'000'000.0L + exact;
        CHECK(std::fabs(static_cast<long double>(got) - want) <= 0.5L + 1e-18L * exact);
      }
    }
  }
  clk::set_calibration_for_test(false, 0, 0, 1.0);
}

namespace {
std::uint64_t unshifted_raw_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// init() again with KOB_TEST_CLOCK_SHIFT_NS set to `shift` (nullptr: unset), on the real sources.
void reinit_with_shift(const char* shift) {
  if (shift != nullptr) {
    setenv("KOB_TEST_CLOCK_SHIFT_NS", shift, 1);
  } else {
    unsetenv("KOB_TEST_CLOCK_SHIFT_NS");
  }
  clk::set_sources_for_test(nullptr, nullptr);  // real sources, and init() runs again
  clk::init();
}
}  // namespace

TEST_CASE("clock: KOB_TEST_CLOCK_SHIFT_NS moves every time of the run by exactly the shift, with the TSC or without") {
  for (const char* shift : {"5000000", "-7000000"}) {
    const std::int64_t s = std::stoll(shift);
    for (const bool tsc : {true, false}) {
      CAPTURE(shift);
      CAPTURE(tsc);
      reinit_with_shift(shift);
      if (!tsc) kob::g_hot.use_tsc = false;  // this machine's TSC or not: both paths
      const std::uint64_t before = unshifted_raw_ns();
      const std::uint64_t tick = clk::now();
      const std::uint64_t after = unshifted_raw_ns();
      const std::string ref = clk::wall_reference();
      const std::uint64_t after_ref = unshifted_raw_ns();
      clk::finish_calibration();
      // On the shifted line, within the unshifted reads around it (1 µs slack for the TSC
      // calibration's rounding over so short a run).
      const std::int64_t t = static_cast<std::int64_t>(clk::to_ns(tick));
      CHECK(t >= static_cast<std::int64_t>(before) + s - 1000);
      CHECK(t <= static_cast<std::int64_t>(after) + s + 1000);
      const std::int64_t ref_raw = std::stoll(ref.substr(0, ref.find(' ')));
      CHECK(ref_raw >= static_cast<std::int64_t>(after) + s);
      CHECK(ref_raw <= static_cast<std::int64_t>(after_ref) + s);
    }
  }
  reinit_with_shift(nullptr);
  const std::uint64_t before = unshifted_raw_ns();
  const std::uint64_t n = clk::raw_ns();
  CHECK(n >= before);
  CHECK(n <= unshifted_raw_ns());
  clk::set_calibration_for_test(false, 0, 0, 1.0);
}
