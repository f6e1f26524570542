#include "kob/diff.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "common/support/atomic_file.hpp"
#include "common/support/json_doc.hpp"
#include "common/support/text_table.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "kob/progress.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

// Reads one run's raw trace and folds it into its summary, with every call's time.
bool load_run(const std::string& run, std::string& path, DiffRun& out) {
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
  out.summary = summarize_run(data, facts, &out.calls);
  // Figures that miss part of a run compare badly: said, not hidden.
  if (out.summary.dropped)
    say(path + ": " + std::to_string(out.summary.dropped) + " events were dropped; its figures miss part of the run");
  return true;
}

// A pattern (* ? [) that names no file as it is: the files it matches, in order; else as given.
std::vector<std::string> expand(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    struct stat st {};
    glob_t g{};
    if (a.find_first_of("*?[") == std::string::npos || ::stat(a.c_str(), &st) == 0 ||
        ::glob(a.c_str(), 0, nullptr, &g) != 0 || g.gl_pathc == 0) {
      out.push_back(a);
    } else {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        const std::string p = g.gl_pathv[i];
        // A run's prefix matches its other files too: the raw traces only.
        if (p.size() > 4 && p.compare(p.size() - 4, 4, ".kob") == 0) out.push_back(p);
      }
      if (out.empty() || g.gl_pathc == 0) out.push_back(a);
    }
    globfree(&g);
  }
  return out;
}

double pct(double from, double to) { return (to - from) / from * 100.0; }

std::string fmt_pct(double v, bool sign = true) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", v);
  return buf;
}

std::string fmt_calls(double v) {
  char buf[32];
  if (v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::uint64_t ns(double v) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, v))); }

bool both(const DiffRow& r) { return r.in_a && r.in_b; }
bool has_change_pct(const DiffRow& r) { return both(r) && r.total_a > 0; }
bool has_median_pct(const DiffRow& r) { return both(r) && r.verdict.median_a > 0; }

void sort_rows(std::vector<DiffRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::make_tuple(x.runtime, -x.at_stake(), -x.total_a, x.name, x.kind) <
           std::make_tuple(y.runtime, -y.at_stake(), -y.total_a, y.name, y.kind);
  });
}

std::string label(const DiffRow& r) {
  if (r.construct) return "OpenMP " + r.kind + " at \"" + summary_format::location(r.name) + "\"";
  return r.kind.empty() ? "region \"" + summary_format::name(r.name) + "\""
                        : "kernel \"" + summary_format::name(r.name) + "\" (" + r.kind + ", " + r.device + ")";
}

const char* row_type(const DiffRow& r) { return r.construct ? "construct" : r.kind.empty() ? "region" : "kernel"; }

std::uint64_t seed_of(const DiffRow& r) {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::string* s : {&r.name, &r.kind, &r.device, &r.file})
    for (char c : *s + '\0') h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ r.line;
}

// Rows of one kind keyed as they match across runs; each run adds its calls to its side.
struct Rows {
  std::map<std::string, DiffRow> by_key;
  DiffRow& at(const std::string& key, bool& fresh) {
    auto [it, inserted] = by_key.try_emplace(key);
    fresh = inserted;
    return it->second;
  }
};

// The run's call times move into the row (a row of a million calls: no copy).
void add_side(DiffRow& r, bool is_a, std::size_t run, std::uint64_t calls, std::uint64_t total, noise::Run* times) {
  (is_a ? r.in_a : r.in_b) = true;
  (is_a ? r.calls_a : r.calls_b) += double(calls);
  (is_a ? r.total_a : r.total_b) += double(total);
  noise::Side& side = is_a ? r.times_a : r.times_b;
  if (side.size() <= run) side.resize(run + 1);
  if (times != nullptr && side[run].empty()) side[run] = std::move(*times);
  else if (times != nullptr) side[run].insert(side[run].end(), times->begin(), times->end());
}

template <class Map>
noise::Run* find_times(Map& m, const typename Map::key_type& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

void add_run(DiffRun& run, bool is_a, std::size_t index, Rows& kernels, Rows& regions, Rows& constructs) {
  bool fresh = false;
  for (const KernelStats& k : run.summary.kernels) {
    DiffRow& r = kernels.at(k.name + '\0' + k.kind + '\0' + k.device, fresh);
    r.name = k.name;
    r.kind = k.kind;
    r.device = k.device;
    add_side(r, is_a, index, k.calls, k.total, find_times(run.calls.kernels, {k.name, k.kind, k.space}));
  }
  for (const RegionStats& g : run.summary.regions) {
    DiffRow& r = regions.at(g.path, fresh);
    r.name = g.path;
    add_side(r, is_a, index, g.calls, g.inclusive, find_times(run.calls.regions, g.path));
  }
  for (const OmpConstructStats& c : run.summary.openmp.constructs) {
    const std::string key = c.place_key();
    DiffRow& r = constructs.at(key, fresh);
    if (fresh) {
      r.name = c.label;
      r.kind = c.kind;
      r.construct = true;
      r.runtime = c.kokkos_runtime;
      r.function = c.function;
      r.file = c.file;
      r.line = c.line;
      r.module = c.module;
    }
    add_side(r, is_a, index, c.calls, c.total, find_times(run.calls.constructs, key));
  }
}

}  // namespace

const char* DiffRow::status() const {
  if (!in_a) return "new";
  if (!in_b) return "gone";
  if (verdict.beyond) return verdict.change_pct > 0 ? "slower" : "faster";
  if (same) return "same";
  return verdict.judged ? "within_noise" : "few_calls";
}

Diff diff_runs(std::vector<DiffRun>& a, std::vector<DiffRun>& b, double fail_above_pct, bool include_runtime) {
  Diff d;
  Rows kernels, regions, constructs;
  for (std::size_t i = 0; i < a.size(); ++i) add_run(a[i], true, i, kernels, regions, constructs);
  for (std::size_t i = 0; i < b.size(); ++i) add_run(b[i], false, i, kernels, regions, constructs);
  for (const DiffRun& r : a) d.run_time_a += double(r.summary.run_time) / double(a.size());
  for (const DiffRun& r : b) d.run_time_b += double(r.summary.run_time) / double(b.size());
  // Per run; a run without the row's calls counts as none of them (its times: an empty run).
  for (Rows* rows : {&kernels, &regions, &constructs})
    for (auto& [key, r] : rows->by_key) {
      r.calls_a /= double(std::max<std::size_t>(a.size(), 1));
      r.total_a /= double(std::max<std::size_t>(a.size(), 1));
      r.calls_b /= double(std::max<std::size_t>(b.size(), 1));
      r.total_b /= double(std::max<std::size_t>(b.size(), 1));
      if (both(r) && noise::judgeable(r.times_a, r.times_b)) ++d.judged;
    }
  for (auto [rows, out] : {std::pair{&kernels, &d.kernels}, {&regions, &d.regions}, {&constructs, &d.constructs}}) {
    for (auto& [key, r] : rows->by_key) {
      // Each side's calls pooled and sorted once: the verdict, "same" (the same multiset of calls
      // on both sides, A against itself, whatever the count) and the spreads read them.
      const noise::Run pa = noise::pooled(r.times_a), pb = noise::pooled(r.times_b);
      r.verdict = both(r) ? noise::compare(r.times_a, r.times_b, pa, pb, d.judged, seed_of(r)) : noise::Verdict{};
      if (!both(r)) {  // new or gone: no comparison, its own side's median all the same
        r.verdict.median_a = noise::median_of_sorted(pa);
        r.verdict.median_b = noise::median_of_sorted(pb);
      }
      r.same = both(r) && pa == pb;
      r.spread_a = noise::spread_of_sorted(pa);
      r.spread_b = noise::spread_of_sorted(pb);
      out->push_back(std::move(r));
    }
    sort_rows(*out);
  }
  if (fail_above_pct >= 0) {
    const double matters = kMattersShare * d.run_time_a;
    for (const auto* rows : {&d.kernels, &d.regions, &d.constructs})
      for (const DiffRow& r : *rows)
        if (both(r) && r.verdict.beyond && r.verdict.change_pct > fail_above_pct && r.at_stake() >= matters &&
            (include_runtime || !r.runtime))
          d.regressions.push_back(r);
  }
  return d;
}

namespace {

std::string runs_title(const std::vector<std::string>& paths, double run_time) {
  const std::string t = summary_format::time(ns(run_time));
  if (paths.size() == 1) return summary_format::name(paths[0]) + " (run time " + t + ")";
  std::string s = std::to_string(paths.size()) + " runs (mean run time " + t + "):";
  for (const std::string& p : paths) s += " " + summary_format::name(p);
  return s;
}

std::string ci_cell(const DiffRow& r) {
  if (!r.verdict.judged) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%+.0f, %+.0f]%%", r.verdict.ci_low_pct, r.verdict.ci_high_pct);
  return buf;
}

std::string status_cell(const DiffRow& r) {
  std::string s = r.status();
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

std::vector<std::string> head(const char* first, bool kind, bool wide) {
  std::vector<std::string> h{first};
  if (kind && wide) h.push_back("kind");
  if (wide) {
    for (const char* c : {"calls A", "calls B", "median A", "median B", "change", "95% CI", "at stake", "total A", "total B",
                          "spread A", "spread B"})
      h.push_back(c);
  } else {
    for (const char* c : {"calls", "median A", "median B", "change [95% CI]"}) h.push_back(c);
  }
  h.push_back("status");
  return h;
}

// Calls per run: "8" when both sides made as many, else "8/9" (A/B).
std::string calls_cell(const DiffRow& r) {
  const std::string a = r.in_a ? fmt_calls(r.calls_a) : "-", b = r.in_b ? fmt_calls(r.calls_b) : "-";
  return a == b ? a : a + "/" + b;
}

std::vector<std::string> cells(const DiffRow& r, std::string first, bool kind, bool wide) {
  using text_table::time_cell;
  std::vector<std::string> row{std::move(first)};
  const std::string change = has_median_pct(r) ? fmt_pct(r.verdict.change_pct) : "-";
  if (!wide) {
    row.push_back(calls_cell(r));
    row.push_back(r.in_a ? time_cell(ns(r.verdict.median_a)) : "-");
    row.push_back(r.in_b ? time_cell(ns(r.verdict.median_b)) : "-");
    row.push_back(r.verdict.judged ? change + " " + ci_cell(r) : change);
    row.push_back(status_cell(r));
    return row;
  }
  if (kind) row.push_back(r.kind);
  row.push_back(r.in_a ? fmt_calls(r.calls_a) : "-");
  row.push_back(r.in_b ? fmt_calls(r.calls_b) : "-");
  row.push_back(r.in_a ? time_cell(ns(r.verdict.median_a)) : "-");
  row.push_back(r.in_b ? time_cell(ns(r.verdict.median_b)) : "-");
  row.push_back(change);
  row.push_back(ci_cell(r));
  row.push_back(time_cell(ns(r.at_stake()), r.total_b < r.total_a));
  row.push_back(r.in_a ? time_cell(ns(r.total_a)) : "-");
  row.push_back(r.in_b ? time_cell(ns(r.total_b)) : "-");
  row.push_back(r.spread_a >= 0 ? fmt_pct(r.spread_a, false) : "-");
  row.push_back(r.spread_b >= 0 ? fmt_pct(r.spread_b, false) : "-");
  row.push_back(status_cell(r));
  return row;
}

// How many rows of a table carry each kernel name, and each name and kind (counted once a table).
struct NameCounts {
  std::map<std::string, std::size_t> name;
  std::map<std::pair<std::string, std::string>, std::size_t> name_kind;
  explicit NameCounts(const std::vector<DiffRow>& rows) {
    for (const DiffRow& r : rows) {
      ++name[r.name];
      ++name_kind[{r.name, r.kind}];
    }
  }
};

// A kernel's name: with its kind (narrow table; --wide has the column) and its space where another
// row has the same name.
std::string kernel_name(const DiffRow& r, const NameCounts& counts, bool wide) {
  const std::size_t same = counts.name.at(r.name), same_kind = counts.name_kind.at({r.name, r.kind});
  std::string s = summary_format::name(r.name);
  if (same > same_kind && !wide) s += " (" + r.kind + ")";
  if (same_kind > 1) s += " [" + r.device + "]";
  return s;
}

std::string table_of(const std::vector<DiffRow>& rows, const char* first, bool kind, bool wide) {
  std::vector<std::vector<std::string>> t{head(first, kind, wide)};
  std::vector<const DiffRow*> of;  // t's rows
  bool runtime_head = false;
  for (const DiffRow& r : rows) {
    if (r.runtime && !runtime_head) {
      runtime_head = true;
      t.push_back({"Kokkos runtime:"});
      of.push_back(nullptr);
    }
    t.push_back(cells(r, "", kind, wide));
    of.push_back(&r);
  }
  // Names cut to the room the other columns leave; a construct's in its function (file and line stay).
  const std::size_t room = text_table::first_column_room(t, text_table::width());
  const NameCounts counts(rows);
  for (std::size_t i = 0; i < of.size(); ++i) {
    const DiffRow* r = of[i];
    if (r == nullptr) continue;
    const std::string indent = r->runtime ? "  " : "", suffix = r->construct ? " (" + r->kind + ")" : "";
    const std::size_t left = room > indent.size() + suffix.size() ? room - indent.size() - suffix.size() : 0;
    t[i + 1][0] = indent + (r->construct ? summary_format::location(r->name, left)
                            : kind       ? kernel_name(*r, counts, wide)
                                         : summary_format::name(r->name)) + suffix;
  }
  return summary_format::table(t);
}

}  // namespace

std::string diff_text(const Diff& d, const DiffRequest& q) {
  const bool wide = text_table::width() == 0;
  std::string o = "kob diff: A = " + runs_title(d.paths_a, d.run_time_a) + ", B = " + runs_title(d.paths_b, d.run_time_b) + "\n";
  o += "\nKokkos kernels, largest time at stake (|total B - total A| per run) first:\n";
  o += d.kernels.empty() ? "  (none in either run)\n" : table_of(d.kernels, "kernel", true, wide);
  o += "\nKokkos regions (inclusive time), largest time at stake first:\n";
  o += d.regions.empty() ? "  (none in either run)\n" : table_of(d.regions, "region", false, wide);
  // Only where a run has them: programs without OpenMP of their own outside kernels keep the report they had.
  if (!d.constructs.empty()) {
    o += "\nOpenMP constructs outside Kokkos kernels (by kind and source location), largest time at stake first:\n";
    o += table_of(d.constructs, "location", false, wide);
  }
  o += "\ncalls: per run (A/B where they differ). median: of one call. change: of the median, with its 95% confidence\n"
       "interval (bootstrap over runs and calls). slower / faster: beyond the noise (the interval at a 5%\n"
       "error rate over all " + std::to_string(d.judged) + " rows compared leaves out 0); few calls: under " +
       std::to_string(noise::kMinCalls) + " a side, no verdict.\n";
  if (d.paths_a.size() == 1 || d.paths_b.size() == 1)
    o += "One run on a side: the interval holds the noise between calls, not between runs; give several runs a\n"
         "side (kob diff A1 A2 A3 --vs B1 B2 B3) to take that in.\n";
  if (q.fail_given) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g%%", q.fail_above);
    o += std::to_string(d.regressions.size()) + " regression" + (d.regressions.size() == 1 ? "" : "s") +
         " over --fail-above=" + buf + " (median beyond noise, at stake >= 1% of A's run time" +
         (q.include_runtime ? "" : ", Kokkos runtime left out") + ")\n";
  }
  return o;
}

namespace {

// A percentage, or null where there is none (a change in % of nothing, a spread unknown).
json::Doc pct_or_null(bool known, double v) { return known ? json::Doc(json::figure(v)) : json::Doc(); }

json::Doc row_json(const DiffRow& r) {
  json::Doc o = {{"name", r.name}};
  if (!r.kind.empty()) o["kind"] = r.kind;
  if (!r.device.empty()) o["device"] = r.device;
  if (r.construct) {
    o["function"] = r.function;
    o["file"] = r.file;
    o["line"] = r.line;
    o["module"] = r.module;
    o["group"] = r.runtime ? "kokkos_runtime" : "program";
  }
  o["calls_a"] = json::figure(r.calls_a);
  o["calls_b"] = json::figure(r.calls_b);
  o["total_a_us"] = json::us(ns(r.total_a));
  o["total_b_us"] = json::us(ns(r.total_b));
  o["median_a_us"] = json::us(ns(r.verdict.median_a));
  o["median_b_us"] = json::us(ns(r.verdict.median_b));
  o["change_us"] = r.total_b < r.total_a ? -json::us(ns(r.at_stake())) : json::us(ns(r.at_stake()));
  o["change_pct"] = pct_or_null(has_change_pct(r), pct(r.total_a, r.total_b));
  o["median_change_pct"] = pct_or_null(has_median_pct(r), r.verdict.change_pct);
  o["ci95_pct"] = r.verdict.judged ? json::Doc::array({json::figure(r.verdict.ci_low_pct), json::figure(r.verdict.ci_high_pct)})
                                   : json::Doc();
  o["judged"] = r.verdict.judged;
  o["beyond_noise"] = r.verdict.beyond;
  o["at_stake_us"] = json::us(ns(r.at_stake()));
  o["spread_a_pct"] = pct_or_null(r.spread_a >= 0, r.spread_a);
  o["spread_b_pct"] = pct_or_null(r.spread_b >= 0, r.spread_b);
  o["status"] = r.status();
  return o;
}

}  // namespace

std::string diff_json(const Diff& d, const DiffRequest& q) {
  auto side = [](const std::vector<std::string>& paths, double run_time) {
    json::Doc p = json::Doc::array();
    for (const std::string& s : paths) p.push_back(s);
    return json::Doc{{"path", paths.empty() ? std::string() : paths[0]}, {"paths", p}, {"run_time_us", json::us(ns(run_time))}};
  };
  json::Doc o = {{"a", side(d.paths_a, d.run_time_a)},
                 {"b", side(d.paths_b, d.run_time_b)},
                 {"fail_above_pct", q.fail_given ? json::Doc(json::figure(q.fail_above)) : json::Doc()},
                 {"include_runtime", q.include_runtime},
                 {"rows_judged", d.judged}};
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
    if (!r.device.empty()) g["device"] = r.device;
    g["median_a_us"] = json::us(ns(r.verdict.median_a));
    g["median_b_us"] = json::us(ns(r.verdict.median_b));
    g["median_change_pct"] = json::figure(r.verdict.change_pct);
    g["ci95_pct"] = json::Doc::array({json::figure(r.verdict.ci_low_pct), json::figure(r.verdict.ci_high_pct)});
    g["at_stake_us"] = json::us(ns(r.at_stake()));
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

int diff_command(const DiffRequest& q) {
  std::vector<std::string> paths_a, paths_b;
  std::vector<DiffRun> a, b;
  bool ok = true;
  for (auto [args, paths, runs] : {std::tuple{&q.a, &paths_a, &a}, {&q.b, &paths_b, &b}})
    for (const std::string& run : expand(*args)) {
      runs->emplace_back();
      std::string path;
      ok = load_run(run, path, runs->back()) && ok;
      paths->push_back(path);
    }
  if (!ok) return 1;
  Diff d = diff_runs(a, b, q.fail_given ? q.fail_above : -1.0, q.include_runtime);
  d.paths_a = paths_a;
  d.paths_b = paths_b;
  const std::string report = q.json ? diff_json(d, q) : diff_text(d, q);
  if (q.output.empty()) {
    std::fwrite(report.data(), 1, report.size(), stdout);
    std::fflush(stdout);
  } else {
    std::string error;
    if (!atomic_file::write(
            q.output, [&](std::FILE* f) { return std::fwrite(report.data(), 1, report.size(), f) == report.size(); }, error)) {
      say(error);
      return 1;
    }
  }
  for (const DiffRow& r : d.regressions) {
    const double share = d.run_time_a > 0 ? r.at_stake() / d.run_time_a * 100.0 : 0.0;
    char buf[160];
    std::snprintf(buf, sizeof buf, " (%+.1f%%, 95%% CI [%+.1f, %+.1f]%%, over %g%%), ", r.verdict.change_pct, r.verdict.ci_low_pct,
                  r.verdict.ci_high_pct, q.fail_above);
    say("regression: " + label(r) + ": median " + summary_format::time(ns(r.verdict.median_a)) + " -> " +
        summary_format::time(ns(r.verdict.median_b)) + buf + summary_format::time(ns(r.at_stake())) + " at stake per run (" +
        fmt_pct(share, false) + " of A's run time)");
  }
  return d.regressions.empty() ? 0 : kDiffRegression;
}

}  // namespace kob::cli
