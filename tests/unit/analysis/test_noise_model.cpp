// kob diff's noise model: verdicts on call times of known distributions.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "common/analysis/noise_model.hpp"

namespace noise = kob::noise;

namespace {

// n calls around base ns: 8% log-normal jitter, 3% of them 1.5x to 3x longer.
noise::Run jittered(std::uint64_t seed, std::size_t n, double base) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.08);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  noise::Run r;
  for (std::size_t i = 0; i < n; ++i) {
    double v = base * std::exp(jitter(rng));
    if (unit(rng) < 0.03) v *= 1.5 + 1.5 * unit(rng);
    r.push_back(static_cast<std::uint64_t>(v));
  }
  return r;
}

}  // namespace

TEST_CASE("noise model: the same calls, or the same distribution, are within noise") {
  const noise::Side a{{100, 100, 100, 100}};
  noise::Verdict v = noise::compare(a, a, 1, 7);
  CHECK(v.judged);
  CHECK_FALSE(v.beyond);
  CHECK(v.change_pct == 0);
  CHECK(v.ci_low_pct == 0);
  CHECK(v.ci_high_pct == 0);
  int marked = 0;
  for (std::uint64_t s = 0; s < 40; ++s) {
    v = noise::compare({jittered(2 * s, 200, 50'000)}, {jittered(2 * s + 1, 200, 50'000)}, 5, s);
    CHECK(v.judged);
    CHECK(v.ci_low_pct <= v.change_pct);
    CHECK(v.change_pct <= v.ci_high_pct);
    marked += v.beyond ? 1 : 0;
  }
  // A row is tested at 5% / 5 rows: about one in a hundred marked; none in these 40 draws.
  CHECK(marked == 0);
}

TEST_CASE("noise model: a kernel twice as slow is beyond noise, its interval near +100%") {
  const noise::Verdict v = noise::compare({jittered(1, 200, 100'000)}, {jittered(2, 200, 200'000)}, 5, 3);
  CHECK(v.beyond);
  CHECK(v.change_pct > 90);
  CHECK(v.change_pct < 110);
  CHECK(v.ci_low_pct > 80);
  CHECK(v.ci_high_pct < 120);
  const noise::Verdict back = noise::compare({jittered(2, 200, 200'000)}, {jittered(1, 200, 100'000)}, 5, 3);
  CHECK(back.beyond);
  CHECK(back.change_pct < -40);
  // Constant calls: the interval is the change itself.
  const noise::Verdict c = noise::compare({{10, 10, 10}}, {{20, 20, 20}}, 1, 1);
  CHECK(c.beyond);
  CHECK(c.ci_low_pct == doctest::Approx(100));
  CHECK(c.ci_high_pct == doctest::Approx(100));
}

TEST_CASE("noise model: under 3 calls a side, no verdict; runs of a side count together") {
  noise::Verdict v = noise::compare({{10, 10}}, {{20, 20}}, 1, 1);
  CHECK_FALSE(v.judged);
  CHECK_FALSE(v.beyond);
  CHECK(v.change_pct == doctest::Approx(100));
  v = noise::compare({{10}, {10}, {11}}, {{20}, {21}, {20}}, 1, 1);
  CHECK(v.judged);
  CHECK(v.beyond);
}

TEST_CASE("noise model: several runs a side bring the noise between runs into the interval") {
  // Each run's calls sit at its own level (a busy machine, another placement): 70, 100, 130 us.
  noise::Side a, b;
  for (std::uint64_t i = 0; i < 3; ++i) {
    a.push_back(jittered(10 + i, 100, 70'000 + 30'000 * double(i)));
    b.push_back(jittered(20 + i, 100, 70'000 + 30'000 * double((i + 1) % 3)));
  }
  const noise::Verdict runs = noise::compare(a, b, 1, 5);
  CHECK(runs.judged);
  CHECK_FALSE(runs.beyond);
  CHECK(runs.ci_low_pct < -10);
  CHECK(runs.ci_high_pct > 10);
  // One run a side, the 100 us one against the 130 us one: the calls alone call that a change.
  const noise::Verdict one = noise::compare({a[1]}, {b[1]}, 1, 5);
  CHECK(one.beyond);
}

TEST_CASE("noise model: long runs enter as quantiles; medians and spread") {
  const noise::Run many = jittered(3, 100'000, 1000);
  const noise::Verdict v = noise::compare({many}, {many}, 1, 9);
  CHECK_FALSE(v.beyond);
  CHECK(noise::median({{1, 2, 3, 4}}) == doctest::Approx(2.5));
  CHECK(noise::median({{5}, {1, 9}}) == doctest::Approx(5));
  CHECK(noise::median({}) == 0);
  CHECK(noise::spread_pct({{1, 2}}) < 0);
  noise::Run r;
  for (std::uint64_t i = 1; i <= 100; ++i) r.push_back(i);
  // p10 = 11, p90 = 90, median 50.5
  CHECK(noise::spread_pct({r}) == doctest::Approx((90.0 - 11.0) / 50.5 * 100));
  CHECK(noise::calls({{1, 2}, {}, {3}}) == 3);
}
