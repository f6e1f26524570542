// `kob diff A B` or `kob diff A1 A2 ... --vs B1 B2 ...`: runs compared per Kokkos kernel, region
// and OpenMP construct outside kernels. The figure compared is the median time of a call, with a
// confidence interval from the calls of every run of each side (common/analysis/noise_model.hpp):
// a change is marked only where it is beyond that noise. With --fail-above, a CI gate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/analysis/call_times.hpp"
#include "common/analysis/noise_model.hpp"
#include "common/analysis/summary.hpp"

namespace kob::cli {

struct DiffRequest {
  std::vector<std::string> a, b;  // runs: PREFIX.kob or PREFIX (a pattern with * ? [ is expanded)
  bool json = false;              // JSON instead of the text tables
  std::string output;             // the report into this file instead of stdout
  bool fail_given = false;
  double fail_above = 0;          // percent
  bool include_runtime = false;   // Kokkos' own start-up and finalize count as regressions too
};

// Exit statuses beyond 0 (no regression), 1 (a run not read, a file not written), 2 (usage).
constexpr int kDiffRegression = 3;

// What matters for --fail-above: time at stake of at least this share of A's run time.
constexpr double kMattersShare = 0.01;

// One kernel (name + kind), region (path) or OpenMP construct (kind + source location) on both
// sides, or on one. Calls and totals are per run (the mean over the side's runs).
struct DiffRow {
  std::string name, kind;  // kind: "" for a region; name: a construct's label ("function file:line")
  std::string device;      // a kernel's execution space (a row per name, kind and space)
  bool construct = false;  // an OpenMP construct outside kernels (OmpSummary::constructs)
  bool runtime = false;    // a construct of Kokkos' own start-up or finalize (the "Kokkos runtime" group)
  std::string function, file, module;  // a construct's location (module: the run's where it first appears)
  std::uint32_t line = 0;
  double calls_a = 0, calls_b = 0;  // per run
  double total_a = 0, total_b = 0;  // ns per run
  bool in_a = false, in_b = false;
  noise::Side times_a, times_b;  // every call's time, per run
  noise::Verdict verdict;
  bool same = false;                    // the very same calls on both sides
  double spread_a = -1, spread_b = -1;  // noise::spread_pct
  double at_stake() const { return total_b > total_a ? total_b - total_a : total_a - total_b; }
  // new, gone, slower, faster (beyond noise), within_noise, same (the very same calls), few_calls
  const char* status() const;
};

struct Diff {
  std::vector<std::string> paths_a, paths_b;
  double run_time_a = 0, run_time_b = 0;  // ns, mean over each side's runs
  std::size_t judged = 0;                 // rows with a verdict (the noise model's divisor)
  std::vector<DiffRow> kernels, regions;  // largest time at stake first
  std::vector<DiffRow> constructs;        // likewise; the Kokkos runtime group last
  std::vector<DiffRow> regressions;       // over --fail-above, in that order (kernels, regions, constructs)
};

// One run as the comparison takes it.
struct DiffRun {
  Summary summary;
  CallTimes calls;
};

// The comparison itself: rows matched by name and kind (kernels), path (regions) or kind,
// function, file and line (constructs; module and offset where there is no line), judged, sorted;
// the regressions over fail_above_pct when given (a negative value: none).
// The runs' call times move into the rows.
Diff diff_runs(std::vector<DiffRun>& a, std::vector<DiffRun>& b, double fail_above_pct, bool include_runtime);
std::string diff_text(const Diff& d, const DiffRequest& request);
std::string diff_json(const Diff& d, const DiffRequest& request);

// --fail-above=PCT: a number >= 0; false (and one line on stderr) otherwise.
bool parse_fail_above(const std::string& value, double& pct);

// Exit status: 0 compared (no regression over --fail-above), 1 a run could not be read or the
// file not written, 2 usage, 3 a regression over --fail-above (one line each on stderr).
int diff_command(const DiffRequest& request);

}  // namespace kob::cli
