// `kob diff A B`: two runs compared per Kokkos kernel, region and OpenMP construct outside kernels
// (calls, total and mean time, the change, the per-call spread), largest time at stake first; with
// --fail-above, a CI gate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"

namespace kob::cli {

struct DiffRequest {
  std::string a, b;       // PREFIX.kob or PREFIX
  bool json = false;      // JSON instead of the text tables
  std::string output;     // the report into this file instead of stdout
  bool fail_given = false;
  double fail_above = 0;  // percent
};

// Exit statuses beyond 0 (no regression), 1 (a run not read, a file not written), 2 (usage).
constexpr int kDiffRegression = 3;

// What matters for --fail-above: time at stake of at least this share of A's run time.
constexpr double kMattersShare = 0.01;

// One kernel (name + kind), region (path) or OpenMP construct (kind + source location) in both
// runs, or in one.
struct DiffRow {
  std::string name, kind;  // kind: "" for a region; name: a construct's label ("function file:line")
  bool construct = false;  // an OpenMP construct outside kernels (OmpSummary::constructs)
  std::string function, file, module;  // a construct's location (module: the run's where it first appears)
  std::uint32_t line = 0;
  std::uint64_t calls_a = 0, calls_b = 0;
  std::uint64_t total_a = 0, total_b = 0;  // ns
  std::uint64_t min_a = 0, max_a = 0, min_b = 0, max_b = 0;  // per call, ns; kernels only
  bool in_a = false, in_b = false;
  bool has_range = false;  // kernels: per-call min and max are known
  double mean_a() const { return calls_a ? double(total_a) / double(calls_a) : 0.0; }
  double mean_b() const { return calls_b ? double(total_b) / double(calls_b) : 0.0; }
  std::uint64_t at_stake() const { return total_b > total_a ? total_b - total_a : total_a - total_b; }
  const char* status() const;  // slower, faster, same, new, gone
  bool within_noise() const;
  // (max - min) / mean per call, percent; < 0 when unknown (a region, or fewer than 2 calls).
  double spread_a_pct() const;
  double spread_b_pct() const;
};

struct Diff {
  std::string path_a, path_b;
  std::uint64_t run_time_a = 0, run_time_b = 0;  // ns
  std::vector<DiffRow> kernels, regions;        // largest time at stake first
  std::vector<DiffRow> constructs;              // likewise
  std::vector<DiffRow> regressions;             // over --fail-above, in that order (kernels, regions, constructs)
};

// The comparison itself: rows matched by name and kind (kernels), path (regions) or kind,
// function, file and line (constructs; module and offset where there is no line), sorted; the
// regressions over fail_above_pct when given (a negative value: none).
Diff diff_summaries(const Summary& a, const Summary& b, double fail_above_pct);
std::string diff_text(const Diff& d, bool fail_given, double fail_above);
std::string diff_json(const Diff& d, bool fail_given, double fail_above);

// --fail-above=PCT: a number >= 0; false (and one line on stderr) otherwise.
bool parse_fail_above(const std::string& value, double& pct);

// Exit status: 0 compared (no regression over --fail-above), 1 a run could not be read or the
// file not written, 2 usage, 3 a regression over --fail-above (one line each on stderr).
int diff_runs(const DiffRequest& request);

}  // namespace kob::cli
