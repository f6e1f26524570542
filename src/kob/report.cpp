#include "kob/report.hpp"

#include <algorithm>
#include <cstdio>

#include "common/support/atomic_file.hpp"
#include "common/record/clock.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "common/analysis/summary.hpp"
#include "kob/progress.hpp"
#include "kob/run_alignment.hpp"
#include "kob/run_source.hpp"
#include "report/html_report.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

}  // namespace

int report_runs(const ReportRequest& o) {
  if (o.runs.empty()) {
    say("report needs at least one RUN (PREFIX.kob or PREFIX); kob report --help");
    return 2;
  }
  // Runs by rank (those without one after, in the order given): a row each, on one time line
  // (rank 0's clock, the others aligned as kob merge aligns them).
  std::vector<RankRun> runs;
  bool ok = read_rank_runs(o.runs, runs);
  if (runs.empty()) return 1;
  std::vector<RunClock> clocks;
  std::vector<Alignment> align;
  align_rank_runs(runs, clocks, align);

  report::HtmlReport html;
  std::string error;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RankRun& g = runs[i];
    raw::Reader reader;
    if (!reader.open(g.path, error)) {
      say(error);
      ok = false;
      continue;
    }
    RunData data = prepare_run(reader, g.facts, o.quiet);
    TraceInfo info;
    info.pid = g.pid;
    info.process_name = process_name(g.facts);
    Progress progress(g.path);
    reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    ShiftSink shifted(html, align[i]);
    const Summary sum = stream_run(data, g.facts, shifted, info);
    html.set_summary(summary_json(sum, html.other_data()));
    if (runs.size() > 1) html.set_clock(clocks[i].alignment, clocks[i].offset_start_ns, clocks[i].offset_end_ns);
  }

  const std::string out = !o.output.empty() ? o.output : run_prefix(runs[0].path) + ".html";
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
