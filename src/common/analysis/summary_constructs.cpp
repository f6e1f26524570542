#include "common/analysis/summary_constructs.hpp"

#include <algorithm>

#include "common/support/fixed_text.hpp"
#include "common/support/text_table.hpp"


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


}  // namespace

std::string text(const std::vector<OmpConstructStats>& rows) {
  if (rows.empty()) return "";
  const auto time = [](std::uint64_t ns) { return text_table::time_cell(ns); };
  std::string out =
      "\nOpenMP constructs outside Kokkos kernels, by source location (largest total first)\n"
      "  calls: regions (parallel, target), runs per thread (work, sync: times summed over threads),\n"
      "  acquisitions (mutex: total = wait + hold), tasks created (task: total = their run time)\n";
  std::vector<std::vector<std::string>> t{
      {"location", "kind", "calls", "total", "mean", "team", "imbalance", "barrier", "wait", "hold"}};
  // The program's rows (the largest kTextRows), then Kokkos' own as one group: its start-up is
  // not the program's to tune, and in a short run it would top the table.
  std::vector<const OmpConstructStats*> program, runtime;
  for (const OmpConstructStats& r : rows) (r.kokkos_runtime ? runtime : program).push_back(&r);
  const std::size_t shown = std::min(program.size(), kTextRows), shown_runtime = std::min(runtime.size(), kRuntimeRows);
  std::vector<const OmpConstructStats*> of;  // t's rows (nullptr: the group's label)
  auto add = [&](const OmpConstructStats& r) {
    const bool team = (r.category == Category::Parallel || r.category == Category::Work) && r.parallel_regions != 0;
    const bool team_tasks = team && r.imbalance_regions != 0;
    const bool waits = r.category == Category::Mutex || r.category == Category::Sync;
    t.push_back({"", r.kind, std::to_string(r.calls), time(r.total),
                 time(r.mean()), team ? text::fixed(r.mean_team_size(), 1) : "-",
                 team_tasks ? text::fixed(100.0 * r.load_imbalance(), 1, "%") : "-",
                 team_tasks ? text::fixed(100.0 * r.barrier_wait_share(), 1, "%") : "-", waits ? time(r.wait) : "-",
                 r.category == Category::Mutex ? time(r.hold) : "-"});
    of.push_back(&r);
  };
  for (std::size_t i = 0; i < shown; ++i) add(*program[i]);
  if (shown_runtime > 0) {
    std::uint64_t total = 0;
    for (const OmpConstructStats* r : runtime) total += r->total;
    t.push_back({"Kokkos runtime (" + std::to_string(runtime.size()) + " constructs, " + summary_format::time(total) + "):"});
    of.push_back(nullptr);
  }
  for (std::size_t i = 0; i < shown_runtime; ++i) add(*runtime[i]);
  // Cut to the room the other columns leave, in the function: file and line stay whole.
  const std::size_t room = text_table::first_column_room(t, text_table::width());
  for (std::size_t i = 0; i < of.size(); ++i) {
    const OmpConstructStats* r = of[i];
    if (r == nullptr) continue;
    const std::string indent = r->kokkos_runtime ? "  " : "", mark = r->partial ? " *" : "";
    t[i + 1][0] = indent + summary_format::location(r->label, room - indent.size() - mark.size()) + mark;
  }
  out += summary_format::table(t);
  if (program.size() + runtime.size() > shown + shown_runtime)
    out += "  ... and " + std::to_string(program.size() + runtime.size() - shown - shown_runtime) +
           " more (summary.json lists them all)\n";
  return out;
}

}  // namespace summary_constructs

}  // namespace kob
