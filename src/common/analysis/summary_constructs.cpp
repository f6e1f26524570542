#include "common/analysis/summary_constructs.hpp"

#include <algorithm>
#include <cstdio>

#include "common/support/json.hpp"

namespace kob {

const char* OmpConstructStats::category_name() const {
  switch (category) {
    case Category::Parallel: return "parallel";
    case Category::Work: return "work";
    case Category::Sync: return "sync";
    case Category::Mutex: return "mutex";
    case Category::Task: return "task";
    case Category::Target: return "target";
  }
  return "unknown";
}

std::string OmpConstructStats::place_key() const {
  std::string k = kind + '\0' + function + '\0' + file + '\0';
  if (line != 0) return k + std::to_string(line);
  return k + '\0' + module + '\0' + std::to_string(offset) + '\0' + (module.empty() ? source : std::string());
}

namespace summary_constructs {

namespace {

using Category = OmpConstructStats::Category;

std::string fixed(double v, const char* fmt) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string text(const std::vector<OmpConstructStats>& rows) {
  if (rows.empty()) return "";
  using summary_format::time;
  std::string out =
      "\nOpenMP constructs outside Kokkos kernels, by source location (largest total first)\n"
      "  calls: regions (parallel, target), runs per thread (work, sync: times summed over threads),\n"
      "  acquisitions (mutex: total = wait + hold), tasks created (task: total = their run time)\n";
  std::vector<std::vector<std::string>> t{
      {"location", "kind", "calls", "total", "mean", "team", "load imbalance", "barrier wait", "wait", "hold"}};
  const std::size_t shown = std::min(rows.size(), kTextRows);
  for (std::size_t i = 0; i < shown; ++i) {
    const OmpConstructStats& r = rows[i];
    const bool team = (r.category == Category::Parallel || r.category == Category::Work) && r.parallel_regions != 0;
    const bool team_tasks = team && r.imbalance_regions != 0;
    const bool waits = r.category == Category::Mutex || r.category == Category::Sync;
    t.push_back({summary_format::location(r.label) + (r.partial ? " *" : ""), r.kind, std::to_string(r.calls), time(r.total),
                 time(r.mean()), team ? fixed(r.mean_team_size(), "%.1f") : "-",
                 team_tasks ? fixed(100.0 * r.load_imbalance(), "%.1f%%") : "-",
                 team_tasks ? fixed(100.0 * r.barrier_wait_share(), "%.1f%%") : "-", waits ? time(r.wait) : "-",
                 r.category == Category::Mutex ? time(r.hold) : "-"});
  }
  out += summary_format::table(t);
  if (rows.size() > shown)
    out += "  ... and " + std::to_string(rows.size() - shown) + " more (summary.json lists them all)\n";
  return out;
}

void append_json(std::string& o, const std::vector<OmpConstructStats>& rows) {
  using json::append_double;
  using json::append_string;
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  o += ",\n  \"constructs\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const OmpConstructStats& r = rows[i];
    o += i ? ",\n    {" : "\n    {";
    o += "\"kind\": ";
    append_string(o, r.kind);
    o += ", \"category\": \"";
    o += r.category_name();
    o += "\", \"function\": ";
    append_string(o, r.function);
    o += ", \"file\": ";
    append_string(o, r.file);
    o += ", \"line\": " + n(r.line) + ", \"caller\": ";
    append_string(o, r.caller);
    o += ", \"module\": ";
    append_string(o, r.module);
    o += ", \"offset\": " + n(r.offset) + ", \"source\": ";
    append_string(o, r.source);
    o += ", \"label\": ";
    append_string(o, r.label);
    o += ", \"calls\": " + n(r.calls) + ", \"total_ns\": " + n(r.total) + ", \"mean_ns\": " + n(r.mean());
    switch (r.category) {
      case Category::Parallel:
      case Category::Work:
        o += ", \"team_size\": ";
        append_double(o, r.mean_team_size());
        o += ", \"load_imbalance\": ";
        append_double(o, r.load_imbalance());
        o += ", \"barrier_wait\": ";
        append_double(o, r.barrier_wait_share());
        o += ", \"implicit_task_ns\": " + n(r.task_time) + ", \"barrier_wait_ns\": " + n(r.wait_time) +
             ", \"busy_max_ns\": " + n(r.busy_max) + ", \"busy_mean_ns\": " + n(r.busy_mean);
        if (r.category == Category::Parallel) o += ", \"regions_with_kokkos_kernels\": " + n(r.regions_with_kernels);
        break;
      case Category::Mutex:
        o += ", \"wait_ns\": " + n(r.wait) + ", \"hold_ns\": " + n(r.hold) + ", \"nested_holds\": " + n(r.nested_holds) +
             ", \"failed_tries\": " + n(r.failed_tries);
        break;
      case Category::Sync: o += ", \"wait_ns\": " + n(r.wait); break;
      case Category::Task: o += ", \"created\": " + n(r.calls) + ", \"stretches\": " + n(r.stretches); break;
      case Category::Target: break;
    }
    o += std::string(", \"partial\": ") + (r.partial ? "true" : "false") + "}";
  }
  o += "]";
}

}  // namespace summary_constructs

}  // namespace kob
