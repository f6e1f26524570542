#include "kob/report.hpp"

#include <algorithm>
#include <cstdio>

#include "common/support/atomic_file.hpp"
#include "common/record/clock.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "common/analysis/summary.hpp"
#include "kob/progress.hpp"
#include "kob/run_source.hpp"
#include "report/html_report.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

int rank_of(const Facts& facts) {
  try {
    return std::stoi(fact_value(facts, fact::kSection, fact::kMpiRank, fact_value(facts, fact::kSection, fact::kRank, "-1")));
  } catch (...) {
    return -1;
  }
}

}  // namespace

int report_runs(const ReportRequest& o) {
  if (o.runs.empty()) {
    say("report needs at least one RUN (PREFIX.kob or PREFIX); kob report --help");
    return 2;
  }
  // Runs by rank (those without one after, in the order given): a row each.
  struct Given {
    std::string path;
    int rank = -1;
  };
  std::vector<Given> runs;
  bool ok = true;
  std::string error;
  for (const std::string& run : o.runs) {
    raw::Reader reader;
    const std::string path = raw_path(run);
    if (!reader.open(path, error)) {
      say(error);
      ok = false;
      continue;
    }
    runs.push_back({path, rank_of(run_facts(reader))});
  }
  if (runs.empty()) return 1;
  std::stable_sort(runs.begin(), runs.end(), [](const Given& a, const Given& b) {
    if ((a.rank < 0) != (b.rank < 0)) return a.rank >= 0;
    return a.rank < b.rank;
  });

  report::HtmlReport html;
  for (const Given& g : runs) {
    raw::Reader reader;
    if (!reader.open(g.path, error)) {
      say(error);
      ok = false;
      continue;
    }
    const Facts facts = run_facts(reader);
    RunData data = prepare_run(reader, facts, o.quiet);
    TraceInfo info;
    try {
      info.pid = std::stoull(fact_value(facts, fact::kSection, fact::kPid, "0"));
    } catch (...) {
    }
    info.process_name = process_name(facts);
    Progress progress(g.path);
    reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    const Summary sum = stream_run(data, facts, html, info);
    html.set_summary(summary_json(sum, html.other_data()));
  }

  const std::string out = !o.output.empty() ? o.output : runs[0].path.substr(0, runs[0].path.size() - 4) + ".html";
  const std::size_t slash = out.rfind('/');
  if (slash != std::string::npos && slash > 0 && !atomic_file::make_directories(out.substr(0, slash), error)) {
    say(error);
    return 1;
  }
  if (!atomic_file::write(out, [&](std::FILE* f) { return html.write(f); }, error)) {
    say(error);
    return 1;
  }
  if (!o.quiet) say("wrote " + out);
  return ok ? 0 : 1;
}

}  // namespace kob::cli
