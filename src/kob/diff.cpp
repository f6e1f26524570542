#include "kob/diff.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "common/support/atomic_file.hpp"
#include "common/record/clock.hpp"
#include "common/support/json_doc.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "kob/progress.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

// Reads one run's raw trace and folds it into its summary, as kob summary would print it.
bool load_run(const std::string& run, std::string& path, Summary& out) {
  raw::Reader reader;
  std::string error;
  if (!open_run(reader, run, path, error)) {
    say(error);
    return false;
  }
  const Facts facts = run_facts(reader);
  RunData data = prepare_run(reader, facts, false);
  Progress progress(path);
  reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
  out = summarize_run(data, facts);
  // Figures that miss part of a run compare badly: said, not hidden.
  if (out.dropped)
    say(path + ": " + std::to_string(out.dropped) + " events were dropped; its figures miss part of the run");
  return true;
}

double pct(double from, double to) { return (to - from) / from * 100.0; }

std::string fmt_pct(double v, bool sign = true) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", v);
  return buf;
}

std::string fmt_mean(double ns) { return summary_format::time(static_cast<std::uint64_t>(std::llround(ns))); }

std::string fmt_change(const DiffRow& r) {
  if (r.total_b >= r.total_a) return "+" + summary_format::time(r.total_b - r.total_a);
  return "-" + summary_format::time(r.total_a - r.total_b);
}

bool has_change_pct(const DiffRow& r) { return r.in_a && r.in_b && r.total_a > 0; }
bool has_mean_pct(const DiffRow& r) { return r.in_a && r.in_b && r.calls_a > 0 && r.calls_b > 0 && r.total_a > 0; }

void sort_rows(std::vector<DiffRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::make_tuple(y.at_stake(), y.total_a, x.name, x.kind) < std::make_tuple(x.at_stake(), x.total_a, y.name, y.kind);
  });
}

std::string label(const DiffRow& r) {
  if (r.construct) return "OpenMP " + r.kind + " at \"" + summary_format::location(r.name) + "\"";
  return r.kind.empty() ? "region \"" + summary_format::name(r.name) + "\""
                        : "kernel \"" + summary_format::name(r.name) + "\" (" + r.kind + ")";
}

const char* row_type(const DiffRow& r) { return r.construct ? "construct" : r.kind.empty() ? "region" : "kernel"; }

// A percentage, or null where there is none (a change in % of nothing, a spread unknown).
json::Doc pct_or_null(bool known, double v) { return known ? json::Doc(json::figure(v)) : json::Doc(); }

// ns as microseconds, signed.
json::Doc signed_us(std::uint64_t ns, bool negative) { return negative ? -json::us(ns) : json::us(ns); }

json::Doc row_json(const DiffRow& r) {
  json::Doc o = {{"name", r.name}};
  if (!r.kind.empty()) o["kind"] = r.kind;
  if (r.construct) {
    o["function"] = r.function;
    o["file"] = r.file;
    o["line"] = r.line;
    o["module"] = r.module;
  }
  o["calls_a"] = r.calls_a;
  o["calls_b"] = r.calls_b;
  o["total_a_us"] = json::us(r.total_a);
  o["total_b_us"] = json::us(r.total_b);
  o["mean_a_us"] = json::us(static_cast<std::uint64_t>(std::llround(r.mean_a())));
  o["mean_b_us"] = json::us(static_cast<std::uint64_t>(std::llround(r.mean_b())));
  o["change_us"] = signed_us(r.at_stake(), r.total_b < r.total_a);  // total B - total A
  o["change_pct"] = pct_or_null(has_change_pct(r), pct(double(r.total_a), double(r.total_b)));
  o["mean_change_pct"] = pct_or_null(has_mean_pct(r), pct(r.mean_a(), r.mean_b()));
  o["at_stake_us"] = json::us(r.at_stake());
  o["spread_a_pct"] = pct_or_null(r.has_range && r.spread_a_pct() >= 0, r.spread_a_pct());
  o["spread_b_pct"] = pct_or_null(r.has_range && r.spread_b_pct() >= 0, r.spread_b_pct());
  o["status"] = r.status();
  o["within_noise"] = r.within_noise();
  return o;
}

}  // namespace

const char* DiffRow::status() const {
  if (!in_a) return "new";
  if (!in_b) return "gone";
  if (total_b > total_a) return "slower";
  if (total_b < total_a) return "faster";
  return "same";
}

// The same calls, and each run's mean per call inside the other run's per-call [min, max]: the
// change of the mean is no larger than the calls of one run already differ by.
bool DiffRow::within_noise() const {
  if (!in_a || !in_b || calls_a != calls_b) return false;
  const double ma = mean_a(), mb = mean_b();
  if (ma == mb) return true;
  if (!has_range) return false;
  return double(min_a) <= mb && mb <= double(max_a) && double(min_b) <= ma && ma <= double(max_b);
}

double DiffRow::spread_a_pct() const {
  if (!has_range || calls_a < 2 || total_a == 0) return -1;
  return double(max_a - min_a) / mean_a() * 100.0;
}

double DiffRow::spread_b_pct() const {
  if (!has_range || calls_b < 2 || total_b == 0) return -1;
  return double(max_b - min_b) / mean_b() * 100.0;
}

Diff diff_summaries(const Summary& a, const Summary& b, double fail_above_pct) {
  Diff d;
  d.run_time_a = a.run_time;
  d.run_time_b = b.run_time;
  // Kernels by name and kind (the summary has one row each; rows merged all the same).
  std::map<std::pair<std::string, std::string>, DiffRow> kernels;
  auto add_kernel = [&](const KernelStats& k, bool is_a) {
    DiffRow& r = kernels[{k.name, k.kind}];
    r.name = k.name;
    r.kind = k.kind;
    r.has_range = true;
    bool& in = is_a ? r.in_a : r.in_b;
    std::uint64_t& calls = is_a ? r.calls_a : r.calls_b;
    std::uint64_t& total = is_a ? r.total_a : r.total_b;
    std::uint64_t& mn = is_a ? r.min_a : r.min_b;
    std::uint64_t& mx = is_a ? r.max_a : r.max_b;
    mn = in ? std::min(mn, k.min) : k.min;
    mx = in ? std::max(mx, k.max) : k.max;
    in = true;
    calls += k.calls;
    total += k.total;
  };
  for (const KernelStats& k : a.kernels) add_kernel(k, true);
  for (const KernelStats& k : b.kernels) add_kernel(k, false);
  std::map<std::string, DiffRow> regions;
  auto add_region = [&](const RegionStats& g, bool is_a) {
    DiffRow& r = regions[g.path];
    r.name = g.path;
    (is_a ? r.in_a : r.in_b) = true;
    (is_a ? r.calls_a : r.calls_b) += g.calls;
    (is_a ? r.total_a : r.total_b) += g.inclusive;
  };
  for (const RegionStats& g : a.regions) add_region(g, true);
  for (const RegionStats& g : b.regions) add_region(g, false);
  std::map<std::string, DiffRow> constructs;
  auto add_construct = [&](const OmpConstructStats& c, bool is_a) {
    DiffRow& r = constructs[c.place_key()];
    if (!r.in_a && !r.in_b) {
      r.name = c.label;
      r.kind = c.kind;
      r.construct = true;
      r.function = c.function;
      r.file = c.file;
      r.line = c.line;
      r.module = c.module;
    }
    (is_a ? r.in_a : r.in_b) = true;
    (is_a ? r.calls_a : r.calls_b) += c.calls;
    (is_a ? r.total_a : r.total_b) += c.total;
  };
  for (const OmpConstructStats& c : a.openmp.constructs) add_construct(c, true);
  for (const OmpConstructStats& c : b.openmp.constructs) add_construct(c, false);
  for (auto& [key, r] : kernels) d.kernels.push_back(std::move(r));
  for (auto& [key, r] : regions) d.regions.push_back(std::move(r));
  for (auto& [key, r] : constructs) d.constructs.push_back(std::move(r));
  sort_rows(d.kernels);
  sort_rows(d.regions);
  sort_rows(d.constructs);
  if (fail_above_pct >= 0) {
    const double matters = kMattersShare * double(d.run_time_a);
    for (const auto* rows : {&d.kernels, &d.regions, &d.constructs})
      for (const DiffRow& r : *rows)
        if (r.total_b > r.total_a && has_change_pct(r) && double(r.at_stake()) >= matters &&
            pct(double(r.total_a), double(r.total_b)) > fail_above_pct)
          d.regressions.push_back(r);
  }
  return d;
}

std::string diff_text(const Diff& d, bool fail_given, double fail_above) {
  std::string o = "kob diff: A = " + summary_format::name(d.path_a) + " (run time " + summary_format::time(d.run_time_a) +
                  "), B = " + summary_format::name(d.path_b) + " (run time " + summary_format::time(d.run_time_b) + ")\n";
  auto status = [](const DiffRow& r) {
    std::string s = r.status();
    if (r.within_noise() && s != "same") s += " (noise)";
    return s;
  };
  auto cells = [&](const DiffRow& r, std::vector<std::string> row, bool spread) {
    row.push_back(r.in_a ? std::to_string(r.calls_a) : "-");
    row.push_back(r.in_b ? std::to_string(r.calls_b) : "-");
    row.push_back(r.in_a ? summary_format::time(r.total_a) : "-");
    row.push_back(r.in_b ? summary_format::time(r.total_b) : "-");
    row.push_back(fmt_change(r));
    row.push_back(has_change_pct(r) ? fmt_pct(pct(double(r.total_a), double(r.total_b))) : "-");
    row.push_back(r.in_a ? fmt_mean(r.mean_a()) : "-");
    row.push_back(r.in_b ? fmt_mean(r.mean_b()) : "-");
    row.push_back(has_mean_pct(r) ? fmt_pct(pct(r.mean_a(), r.mean_b())) : "-");
    if (spread) {
      row.push_back(r.spread_a_pct() >= 0 ? fmt_pct(r.spread_a_pct(), false) : "-");
      row.push_back(r.spread_b_pct() >= 0 ? fmt_pct(r.spread_b_pct(), false) : "-");
    }
    row.push_back(status(r));
    return row;
  };
  o += "\nKokkos kernels, largest time at stake (|total B - total A|) first:\n";
  if (d.kernels.empty()) {
    o += "  (none in either run)\n";
  } else {
    std::vector<std::vector<std::string>> rows{{"kernel", "kind", "calls A", "calls B", "total A", "total B", "change",
                                                "change %", "mean A", "mean B", "mean %", "spread A", "spread B", "status"}};
    for (const DiffRow& r : d.kernels) rows.push_back(cells(r, {summary_format::name(r.name), r.kind}, true));
    o += summary_format::table(rows);
  }
  o += "\nKokkos regions (inclusive time), largest time at stake first:\n";
  if (d.regions.empty()) {
    o += "  (none in either run)\n";
  } else {
    std::vector<std::vector<std::string>> rows{
        {"region", "calls A", "calls B", "total A", "total B", "change", "change %", "mean A", "mean B", "mean %", "status"}};
    for (const DiffRow& r : d.regions) rows.push_back(cells(r, {summary_format::name(r.name)}, false));
    o += summary_format::table(rows);
  }
  // Only where a run has them: programs without OpenMP of their own outside kernels keep the report they had.
  if (!d.constructs.empty()) {
    o += "\nOpenMP constructs outside Kokkos kernels (by kind and source location), largest time at stake first:\n";
    std::vector<std::vector<std::string>> rows{{"location", "kind", "calls A", "calls B", "total A", "total B", "change",
                                                "change %", "mean A", "mean B", "mean %", "status"}};
    for (const DiffRow& r : d.constructs) rows.push_back(cells(r, {summary_format::location(r.name), r.kind}, false));
    o += summary_format::table(rows);
  }
  o += "\nspread: (max - min) / mean of one run's calls. (noise): the same calls, and each run's mean per call\n"
       "within the other run's per-call [min, max].\n";
  if (fail_given) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g%%", fail_above);
    o += std::to_string(d.regressions.size()) + " regression" + (d.regressions.size() == 1 ? "" : "s") +
         " over --fail-above=" + buf + " (total time, at stake >= 1% of A's run time)\n";
  }
  return o;
}

std::string diff_json(const Diff& d, bool fail_given, double fail_above) {
  json::Doc o = {{"a", {{"path", d.path_a}, {"run_time_us", json::us(d.run_time_a)}}},
                 {"b", {{"path", d.path_b}, {"run_time_us", json::us(d.run_time_b)}}},
                 {"fail_above_pct", fail_given ? json::Doc(json::figure(fail_above)) : json::Doc()}};
  auto list = [](const std::vector<DiffRow>& rows) {
    json::Doc out = json::Doc::array();
    for (const DiffRow& r : rows) out.push_back(row_json(r));
    return out;
  };
  o["kernels"] = list(d.kernels);
  o["regions"] = list(d.regions);
  o["constructs"] = list(d.constructs);
  json::Doc& regressions = o["regressions"] = json::Doc::array();
  for (const DiffRow& r : d.regressions) {
    json::Doc g = {{"type", row_type(r)}, {"name", r.name}};
    if (!r.kind.empty()) g["kind"] = r.kind;
    g["total_a_us"] = json::us(r.total_a);
    g["total_b_us"] = json::us(r.total_b);
    g["change_pct"] = json::figure(pct(double(r.total_a), double(r.total_b)));
    g["at_stake_us"] = json::us(r.at_stake());
    regressions.push_back(g);
  }
  return json::dump(o) + "\n";
}

bool parse_fail_above(const std::string& v, double& out) {
  std::string s = v;
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  errno = 0;
  const double x = s.empty() ? -1 : std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || !std::isfinite(x) || x < 0) {
    say("--fail-above takes a percentage (a number >= 0, e.g. 10 or 2.5), not '" + v + "' (kob diff --help)");
    return false;
  }
  out = x;
  return true;
}

int diff_runs(const DiffRequest& o) {
  Summary a, b;
  std::string path_a, path_b;
  const bool ok_a = load_run(o.a, path_a, a);
  const bool ok_b = load_run(o.b, path_b, b);
  if (!ok_a || !ok_b) return 1;
  Diff d = diff_summaries(a, b, o.fail_given ? o.fail_above : -1.0);
  d.path_a = path_a;
  d.path_b = path_b;
  const std::string report = o.json ? diff_json(d, o.fail_given, o.fail_above) : diff_text(d, o.fail_given, o.fail_above);
  if (o.output.empty()) {
    std::fwrite(report.data(), 1, report.size(), stdout);
    std::fflush(stdout);
  } else {
    std::string error;
    if (!atomic_file::write(
            o.output, [&](std::FILE* f) { return std::fwrite(report.data(), 1, report.size(), f) == report.size(); }, error)) {
      say(error);
      return 1;
    }
  }
  for (const DiffRow& r : d.regressions) {
    const double share = d.run_time_a ? double(r.at_stake()) / double(d.run_time_a) * 100.0 : 0.0;
    char buf[96];
    std::snprintf(buf, sizeof buf, " (%+.1f%%, over %g%%), ", pct(double(r.total_a), double(r.total_b)), o.fail_above);
    std::string line = "regression: " + label(r) + ": total " + summary_format::time(r.total_a) + " -> " +
                       summary_format::time(r.total_b) + buf + summary_format::time(r.at_stake()) + " at stake (" +
                       fmt_pct(share, false) + " of A's run time)" + (r.within_noise() ? ", within noise" : "");
    say(line);
  }
  return d.regressions.empty() ? 0 : kDiffRegression;
}

}  // namespace kob::cli
