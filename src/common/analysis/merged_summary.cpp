#include "common/analysis/merged_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "common/support/json_doc.hpp"
#include "common/support/text_table.hpp"

namespace kob {

namespace {

// One row per key over the runs: each run's (calls, total), 0 where it did not run it.
struct Collect {
  std::string name, kind, device;
  bool kokkos_runtime = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> per_run;  // (calls, total) by run
};

std::vector<AcrossRuns> across(std::map<std::pair<std::string, std::string>, Collect>& rows, const std::vector<MergedRun>& runs) {
  std::vector<AcrossRuns> out;
  for (auto& [key, c] : rows) {
    c.per_run.resize(runs.size());
    AcrossRuns a;
    a.name = c.name;
    a.kind = c.kind;
    a.device = c.device;
    a.kokkos_runtime = c.kokkos_runtime;
    a.calls_min = UINT64_MAX;
    double sum = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto [calls, total] = c.per_run[i];
      const int id = runs[i].rank >= 0 ? runs[i].rank : static_cast<int>(i);
      if (calls) ++a.runs_with;
      a.calls_min = std::min(a.calls_min, calls);
      a.calls_max = std::max(a.calls_max, calls);
      if (a.min_rank < 0 || total < a.min) {
        a.min = total;
        a.min_rank = id;
      }
      if (a.max_rank < 0 || total > a.max) {
        a.max = total;
        a.max_rank = id;
      }
      sum += double(total);
    }
    a.mean = runs.empty() ? 0 : sum / double(runs.size());
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const AcrossRuns& x, const AcrossRuns& y) { return x.max > y.max; });
  return out;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

std::string location_shown(std::string_view label) { return summary_format::location(label); }

std::string signed_time(std::int64_t ns) {
  return text_table::time_cell(static_cast<std::uint64_t>(ns < 0 ? -ns : ns), ns < 0);
}

// The text shows this many construct rows at most (the largest), as the run's own summary does.
constexpr std::size_t kMergedConstructRows = 30;

std::string run_id(const MergedRun& r, std::size_t i) { return r.rank >= 0 ? std::to_string(r.rank) : "#" + std::to_string(i); }

}  // namespace

MergedSummary merge_summaries(std::vector<MergedRun> runs) {
  MergedSummary m;
  std::map<std::pair<std::string, std::string>, Collect> kernels, regions, mpi, constructs;
  // Run i's (calls, total) of one row; key: what tells rows apart when the name does not.
  auto add = [&](auto& rows, const std::string& name, const std::string& kind, std::size_t i, std::uint64_t calls,
                 std::uint64_t total, const std::string& key = "") {
    Collect& c = rows[{key.empty() ? name : key, kind}];
    c.name = name;
    c.kind = kind;
    c.per_run.resize(runs.size());
    c.per_run[i].first += calls;
    c.per_run[i].second += total;
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const KernelStats& k : runs[i].summary.kernels) {
      add(kernels, k.name, k.kind, i, k.calls, k.total, k.name + '\0' + k.device);
      kernels[{k.name + '\0' + k.device, k.kind}].device = k.device;
    }
    for (const RegionStats& r : runs[i].summary.regions) add(regions, r.path, "", i, r.calls, r.inclusive);
    for (const NamedStats& c : runs[i].summary.mpi_calls) add(mpi, c.name, "", i, c.calls, c.total);
    for (const OmpConstructStats& c : runs[i].summary.openmp.constructs) {
      add(constructs, c.label, c.kind, i, c.calls, c.total, c.place_key());
      constructs[{c.place_key(), c.kind}].kokkos_runtime = c.kokkos_runtime;
    }
  }
  m.mpi_calls = across(mpi, runs);
  m.constructs = across(constructs, runs);
  // The program's constructs first, Kokkos' own start-up and finalize after them.
  std::stable_partition(m.constructs.begin(), m.constructs.end(), [](const AcrossRuns& a) { return !a.kokkos_runtime; });
  m.kernels = across(kernels, runs);
  m.regions = across(regions, runs);
  m.runs = std::move(runs);
  return m;
}

std::string merged_summary_text(const MergedSummary& m) {
  using summary_format::name;
  using summary_format::table;
  const auto time = [](std::uint64_t ns) { return text_table::time_cell(ns); };
  std::string out = "== kokkos-ompt-bridge merged summary: " + std::to_string(m.runs.size()) + " runs ==\n";
  out += "\nRuns, on the time line of rank " + (m.runs.empty() ? std::string("?") : run_id(m.runs[0], 0)) + "\n";
  std::vector<std::vector<std::string>> rows{
      {"rank", "host", "pid", "run time", "in MPI calls", "aligned by", "offset at start", "at end", "ping-pong rtt"}};
  for (std::size_t i = 0; i < m.runs.size(); ++i) {
    const MergedRun& r = m.runs[i];
    const bool mpi = r.alignment == "mpi";
    std::uint64_t in_mpi = 0;
    for (const NamedStats& c : r.summary.mpi_calls) in_mpi += c.total;
    rows.push_back({run_id(r, i), name(r.host), std::to_string(r.pid), time(r.summary.run_time),
                    r.summary.mpi_calls.empty() ? "-" : time(in_mpi), r.alignment,
                    signed_time(r.offset_start_ns), signed_time(r.offset_end_ns), mpi ? time(r.rtt_ns) : "-"});
  }
  out += table(rows);
  // What the tool cost each run's threads: their own copies of full ring slots (no core was free
  // for the writer thread), as each run's own summary says it.
  std::string flushed;
  for (std::size_t i = 0; i < m.runs.size(); ++i) {
    const ToolCost& t = m.runs[i].summary.tool;
    if (t.flushes == 0) continue;
    flushed += (flushed.empty() ? "" : ", ") + std::string("rank ") + run_id(m.runs[i], i) + " " + std::to_string(t.flushes) +
               " in " + time(t.flush_ns);
  }
  if (!flushed.empty()) out += "tool flushes (threads that copied their own full slots): " + flushed + "\n";
  auto section = [&](const char* title, const std::vector<AcrossRuns>& v, const char* first, bool kind,
                     std::string (*shown)(std::string_view) = &summary_format::name) {
    if (v.empty()) return;
    out += std::string("\n") + title + " (total time per rank; imbalance = (max - mean) / max)\n";
    std::vector<std::vector<std::string>> t;
    if (kind)
      t.push_back({first, "kind", "ranks", "calls", "min", "mean", "max", "imbalance", "slowest"});
    else
      t.push_back({first, "ranks", "calls", "min", "mean", "max", "imbalance", "slowest"});
    std::map<std::pair<std::string, std::string>, std::size_t> rows_of;  // (name, kind) -> rows: one per space
    for (const AcrossRuns& a : v) ++rows_of[{a.name, a.kind}];
    for (const AcrossRuns& a : v) {
      const std::string calls = a.calls_min == a.calls_max ? std::to_string(a.calls_min)
                                                           : std::to_string(a.calls_min) + "-" + std::to_string(a.calls_max);
      // A kernel name and kind run on several spaces: each row names its space.
      const bool other_space = !a.device.empty() && rows_of[{a.name, a.kind}] > 1;
      std::vector<std::string> row{shown(a.name) + (other_space ? " [" + a.device + "]" : "")};
      if (kind) row.push_back(a.kind);
      for (std::string c : {std::to_string(a.runs_with), calls, time(a.min), time(static_cast<std::uint64_t>(a.mean)), time(a.max),
                            pct(a.imbalance()), std::to_string(a.max_rank)})
        row.push_back(std::move(c));
      t.push_back(std::move(row));
    }
    out += table(t);
  };
  section("Kokkos kernels across ranks", m.kernels, "name", true);
  section("Kokkos regions across ranks", m.regions, "region", false);
  section("Blocking MPI calls across ranks, where a fast rank waits for the slow ones", m.mpi_calls, "call", false);
  std::vector<AcrossRuns> program, runtime;
  for (const AcrossRuns& a : m.constructs) (a.kokkos_runtime ? runtime : program).push_back(a);
  const std::size_t more = program.size() > kMergedConstructRows ? program.size() - kMergedConstructRows : 0;
  program.resize(program.size() - more);
  section("OpenMP constructs outside Kokkos kernels across ranks, by source location", program, "location", true,
          &location_shown);
  if (more) out += "  ... and " + std::to_string(more) + " more (the JSON lists them all)\n";
  section("Kokkos runtime constructs across ranks (Kokkos' own start-up and finalize)", runtime, "location", true,
          &location_shown);
  return out;
}

namespace {

// One table of figures across the runs: name_key names the row; kind: rows carry their kind.
json::Doc across_runs_json(const std::vector<AcrossRuns>& v, const char* name_key, bool kind, bool group = false) {
  json::Doc out = json::Doc::array();
  for (const AcrossRuns& a : v) {
    json::Doc d = {{name_key, a.name}};
    if (kind) d["kind"] = a.kind;
    if (!a.device.empty()) d["device"] = a.device;
    if (group) d["group"] = a.kokkos_runtime ? "kokkos_runtime" : "program";
    d["ranks"] = a.runs_with;
    d["calls_min"] = a.calls_min;
    d["calls_max"] = a.calls_max;
    d["min_us"] = json::us(a.min);
    d["mean_us"] = json::figure(a.mean / 1000.0);
    d["max_us"] = json::us(a.max);
    d["min_rank"] = a.min_rank;
    d["max_rank"] = a.max_rank;
    d["imbalance"] = json::figure(a.imbalance());
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::string merged_summary_json(const MergedSummary& m) {
  json::Doc runs = json::Doc::array();
  for (const MergedRun& r : m.runs)
    runs.push_back({{"rank", r.rank},
                    {"host", r.host},
                    {"exe", r.exe},
                    {"pid", r.pid},
                    {"raw_trace", r.path},
                    {"alignment", r.alignment},
                    {"offset_start_ns", r.offset_start_ns},
                    {"offset_end_ns", r.offset_end_ns},
                    {"rtt_ns", r.rtt_ns},
                    {"run_time_us", json::us(r.summary.run_time)},
                    {"dropped_events", r.summary.dropped},
                    {"tool", {{"flushes", r.summary.tool.flushes}, {"flush_ns", r.summary.tool.flush_ns}}}});
  json::Doc o = {{"tool", "kokkos-ompt-bridge"}, {"merged", true}, {"runs", runs}};
  o["kernels"] = across_runs_json(m.kernels, "name", true);
  o["regions"] = across_runs_json(m.regions, "path", false);
  o["mpi_calls"] = across_runs_json(m.mpi_calls, "name", false);
  o["constructs"] = across_runs_json(m.constructs, "name", true, true);
  return json::dump(o, 1) + "\n";
}

}  // namespace kob
