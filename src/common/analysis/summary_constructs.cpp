#include "common/analysis/summary_constructs.hpp"

#include <algorithm>
#include <cstdio>


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

}  // namespace summary_constructs

}  // namespace kob
