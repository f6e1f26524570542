// Whether the calls of one kernel, region or OpenMP construct changed between two sets of runs
// beyond their noise (kob diff). Each side is one or more runs, each run the durations of its calls.
//
// The figure compared is the median duration of a call (all runs of a side together); its change
// B / A - 1 gets a confidence interval from a hierarchical bootstrap: runs drawn with replacement,
// then calls within each drawn run. Several runs per side so bring the noise between runs (a busy
// machine, another placement) into the interval; one run per side gives only the noise between
// calls. A change is "beyond noise" when the interval at the family-wise level (5 % over all the
// rows judged, Bonferroni) leaves out 0. The 95 % interval is what a report shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kob::noise {

// Calls needed on each side (all runs together) for a verdict; fewer: "too few calls".
constexpr std::size_t kMinCalls = 3;
// Bootstrap resamples (deterministic: seeded by the caller).
constexpr std::size_t kResamples = 2000;
// A run's calls enter the bootstrap as at most this many evenly spaced quantiles of them: the
// interval of a row with more calls is wider than its calls alone would give (it errs toward "within
// noise") and the cost stays bounded whatever the run length.
constexpr std::size_t kMaxPoints = 256;
// The family-wise error rate over all rows judged in one comparison.
constexpr double kFamilyAlpha = 0.05;

using Run = std::vector<std::uint64_t>;  // one run's call durations, ns, in any order
using Side = std::vector<Run>;           // its runs (runs without calls are left out)

struct Verdict {
  bool judged = false;  // enough calls on both sides
  double median_a = 0, median_b = 0;        // ns per call, all runs of the side together
  double change_pct = 0;                    // median B vs median A
  double ci_low_pct = 0, ci_high_pct = 0;   // 95 %
  double test_low_pct = 0, test_high_pct = 0;  // at the family-wise level
  bool beyond = false;  // judged, and the family-wise interval leaves out 0
};

// All calls of a side, sorted: what its median, its spread and a comparison read (made once).
Run pooled(const Side& side);
// The median of sorted calls (0 when there are none).
double median_of_sorted(const Run& sorted);
// (p90 - p10) / median of sorted calls, percent; < 0 with fewer than kMinCalls calls.
double spread_of_sorted(const Run& sorted);
double median(const Side& side);
double spread_pct(const Side& side);
std::size_t calls(const Side& side);

// judged_rows: how many rows of the comparison are judged (the Bonferroni divisor; >= 1);
// pooled_a, pooled_b: pooled(a), pooled(b).
Verdict compare(const Side& a, const Side& b, const Run& pooled_a, const Run& pooled_b, std::size_t judged_rows,
                std::uint64_t seed);
Verdict compare(const Side& a, const Side& b, std::size_t judged_rows, std::uint64_t seed);
bool judgeable(const Side& a, const Side& b);

}  // namespace kob::noise
