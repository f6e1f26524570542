#include "common/analysis/noise_model.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace kob::noise {

namespace {

// splitmix64: small, fast and the same on every platform, so that a report is reproducible.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
};

// The median of v (reordered): the mean of the two middle values when their count is even.
double median_of(std::vector<std::uint64_t>& v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  const double upper = double(v[mid]);
  if (v.size() % 2 == 1) return upper;
  const double lower = double(*std::max_element(v.begin(), v.begin() + long(mid)));
  return (lower + upper) / 2;
}

// A run as the bootstrap draws from it: its calls, or kMaxPoints evenly spaced quantiles of them.
std::vector<Run> points_of(const Side& side) {
  std::vector<Run> out;
  for (const Run& r : side) {
    if (r.empty()) continue;
    Run sorted = r;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.size() > kMaxPoints) {
      Run q(kMaxPoints);
      for (std::size_t i = 0; i < kMaxPoints; ++i) q[i] = sorted[(2 * i + 1) * sorted.size() / (2 * kMaxPoints)];
      sorted = std::move(q);
    }
    out.push_back(std::move(sorted));
  }
  return out;
}

// One hierarchical resample of a side: runs with replacement, then each drawn run's calls.
double resampled_median(const std::vector<Run>& runs, Rng& rng, std::vector<std::uint64_t>& buf) {
  buf.clear();
  for (std::size_t j = 0; j < runs.size(); ++j) {
    const Run& run = runs[rng.below(runs.size())];
    for (std::size_t t = 0; t < run.size(); ++t) buf.push_back(run[rng.below(run.size())]);
  }
  return median_of(buf);
}

double change(double from, double to) { return (to / std::max(from, 1.0) - 1.0) * 100.0; }

}  // namespace

std::size_t calls(const Side& side) {
  std::size_t n = 0;
  for (const Run& r : side) n += r.size();
  return n;
}

Run pooled(const Side& side) {
  Run v;
  v.reserve(calls(side));
  for (const Run& r : side) v.insert(v.end(), r.begin(), r.end());
  std::sort(v.begin(), v.end());
  return v;
}

double median_of_sorted(const Run& v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? double(v[mid]) : (double(v[mid - 1]) + double(v[mid])) / 2;
}

double spread_of_sorted(const Run& v) {
  if (v.size() < kMinCalls) return -1;
  const double mid = median_of_sorted(v);
  if (mid <= 0) return -1;
  const double p10 = double(v[v.size() / 10]), p90 = double(v[v.size() - 1 - v.size() / 10]);
  return (p90 - p10) / mid * 100.0;
}

double median(const Side& side) { return median_of_sorted(pooled(side)); }
double spread_pct(const Side& side) { return spread_of_sorted(pooled(side)); }

bool judgeable(const Side& a, const Side& b) { return calls(a) >= kMinCalls && calls(b) >= kMinCalls; }

Verdict compare(const Side& a, const Side& b, std::size_t judged_rows, std::uint64_t seed) {
  return compare(a, b, pooled(a), pooled(b), judged_rows, seed);
}

Verdict compare(const Side& a, const Side& b, const Run& pooled_a, const Run& pooled_b, std::size_t judged_rows,
                std::uint64_t seed) {
  Verdict v;
  v.median_a = median_of_sorted(pooled_a);
  v.median_b = median_of_sorted(pooled_b);
  v.change_pct = change(v.median_a, v.median_b);
  if (!judgeable(a, b)) return v;
  v.judged = true;
  const std::vector<Run> pa = points_of(a), pb = points_of(b);
  Rng rng{seed};
  std::vector<std::uint64_t> buf;
  std::vector<double> changes(kResamples);
  for (double& c : changes) {
    const double ma = resampled_median(pa, rng, buf);
    c = change(ma, resampled_median(pb, rng, buf));
  }
  std::sort(changes.begin(), changes.end());
  const auto at = [&](double tail) {
    const auto i = static_cast<std::size_t>(std::floor(tail * double(kResamples)));
    return std::pair<double, double>{changes[i], changes[kResamples - 1 - i]};
  };
  std::tie(v.ci_low_pct, v.ci_high_pct) = at(0.025);
  const double alpha = kFamilyAlpha / double(std::max<std::size_t>(judged_rows, 1));
  std::tie(v.test_low_pct, v.test_high_pct) = at(alpha / 2);
  v.beyond = v.test_low_pct > 0 || v.test_high_pct < 0;
  return v;
}

}  // namespace kob::noise
