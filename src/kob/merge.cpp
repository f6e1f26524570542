#include "kob/merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>

#include "common/support/atomic_file.hpp"
#include "common/record/clock.hpp"
#include "common/session/config.hpp"
#include "common/analysis/merged_summary.hpp"
#include "common/formats/otf2_writer.hpp"
#include "common/formats/sqlite_writer.hpp"
#include "common/formats/perfetto_writer.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "common/formats/trace_tee.hpp"
#include "kob/progress.hpp"
#include "kob/run_alignment.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

constexpr std::uint32_t kMergeFormats = kFormatPerfetto | kFormatOtf2 | kFormatSummary | kFormatJson | kFormatSqlite;

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

}  // namespace

bool merge_formats_ok(std::uint32_t formats) {
  if ((formats & ~kMergeFormats) != 0) {
    say("--to: merge writes perfetto, otf2, sqlite, summary and json, not " + format_names(formats & ~kMergeFormats) + " (kob merge --help)");
    return false;
  }
  return true;
}

namespace {

// The merged outputs' view of each run: who it is and how it was aligned.
std::vector<MergedRun> merged_runs(const std::vector<RankRun>& runs, const std::vector<RunClock>& clocks) {
  std::vector<MergedRun> merged(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    MergedRun& m = merged[i];
    m.rank = runs[i].rank;
    m.host = runs[i].host;
    m.exe = runs[i].exe;
    m.path = runs[i].path;
    m.pid = runs[i].pid;
    m.alignment = clocks[i].alignment;
    m.offset_start_ns = clocks[i].offset_start_ns;
    m.offset_end_ns = clocks[i].offset_end_ns;
    m.rtt_ns = clocks[i].rtt_ns;
  }
  return merged;
}

// The merged trace files: the Perfetto file and the OTF2 archive, fed through one tee.
struct MergedTraces {
  trace::TeeTraceSink tee;
  atomic_file::File pf_file;
  std::unique_ptr<trace::TraceSink> pf_sink;
  std::string pf_path;
  std::unique_ptr<otf2::ArchiveSink> otf2_sink;
  std::unique_ptr<sqlite::DatabaseSink> db;  // a rank column in every table, one runs row per rank

  // False when the Perfetto file or the database cannot be made (said; the rest goes on).
  bool open(const std::string& out, std::uint32_t formats, const RankRun& ref) {
    std::string error;
    bool ok = true;
    pf_path = out + ".pftrace";
    if (formats & kFormatPerfetto) {
      if (pf_file.open(pf_path, error)) {
        pf_sink = make_perfetto_sink(pf_file.get());
        tee.add(pf_sink.get());
      } else {
        say(error);
        ok = false;
      }
    }
    if ((formats & kFormatOtf2) && otf2::available()) {
      otf2_sink = std::make_unique<otf2::ArchiveSink>();
      if (ref.has_wall) otf2_sink->set_realtime_reference(ref.wall_raw, ref.wall_real);
      tee.add(otf2_sink.get());
    }
    if (formats & kFormatSqlite) {
      db = std::make_unique<sqlite::DatabaseSink>();
      if (!db->open(out + ".sqlite", error)) {
        say(error);
        db.reset();
        ok = false;
      }
    }
    return ok;
  }

  // Each run streamed through the tee on the reference time line; its summary into merged.
  bool stream(std::vector<RankRun>& runs, const std::vector<Alignment>& align, std::vector<MergedRun>& merged, bool quiet,
              bool& traces_ok) {
    std::set<std::uint64_t> pids;
    std::string error;
    bool ok = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      RankRun& r = runs[i];
      raw::Reader reader;
      if (!reader.open(r.path, error)) {
        say(error);
        ok = false;
        continue;
      }
      RunData data = prepare_run(reader, r.facts, quiet);
      TraceInfo info;
      // Perfetto tells processes apart by pid: ranks on different hosts may share one.
      info.pid = r.pid;
      while (!pids.insert(info.pid).second) info.pid += 1u << 22;
      info.process_name = process_name(r.facts) + " on " + r.host;
      if (otf2_sink) otf2_sink->next_process(r.host, r.rank);
      Progress progress(r.path);
      reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
      ShiftSink shifted(tee, align[i]);
      const Alignment a = align[i];
      if (db) db->next_alignment(merged[i].alignment, merged[i].offset_start_ns, merged[i].offset_end_ns, merged[i].rtt_ns);
      // Summaries alone (no trace, no database): each rank's by the per-thread engine where it
      // covers the run (a summary's times are not shifted: durations, and counts).
      if (!pf_sink && !otf2_sink && !db) merged[i].summary = summarize_run(data, r.facts);
      else merged[i].summary = stream_run(data, r.facts, shifted, info, db.get(), [a](std::uint64_t t) { return a.at(t); });
      traces_ok = traces_ok && (!pf_sink || tee.ok(0));
    }
    return ok;
  }

  // Commits the trace files; the paths written go to `written`.
  bool finish(const std::string& out, bool traces_ok, std::vector<std::string>& written) {
    std::string error;
    bool ok = true;
    if (pf_sink) {
      if (pf_file.commit(traces_ok, error)) {
        written.push_back(pf_path);
      } else {
        say(error);
        ok = false;
      }
    }
    if (otf2_sink) {
      if (otf2_sink->write(out + ".otf2", error)) {
        written.push_back(out + ".otf2");
      } else {
        say(error);
        ok = false;
      }
    }
    if (db) {
      if (db->commit(error)) {
        written.push_back(out + ".sqlite");
      } else {
        say(error);
        ok = false;
      }
    }
    return ok;
  }
};

bool write_summaries(const std::string& out, std::uint32_t formats, const MergedSummary& ms, std::vector<std::string>& written) {
  bool ok = true;
  std::string error;
  auto emit = [&](std::uint32_t format, const std::string& path, const std::string& text) {
    if (!(formats & format)) return;
    if (atomic_file::write(path, [&](std::FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); }, error)) {
      written.push_back(path);
    } else {
      say(error);
      ok = false;
    }
  };
  emit(kFormatSummary, out + ".summary.txt", merged_summary_text(ms));
  emit(kFormatJson, out + ".summary.json", merged_summary_json(ms));
  return ok;
}

}  // namespace

int merge_runs(const MergeRequest& o) {
  if (o.runs.empty()) {
    say("no RUN given (kob merge --help)");
    return 2;
  }
  if (o.output.empty()) {
    say("-o OUT is required (kob merge --help)");
    return 2;
  }
  const std::uint32_t formats = o.formats ? o.formats : kMergeFormats;
  if (!merge_formats_ok(formats)) return 2;
  if ((formats & kFormatOtf2) && !otf2::available()) {
    say("this kob was built without OTF2: no OUT.otf2 (install libopen-trace-format2-dev and rebuild)");
  }
  std::vector<RankRun> runs;
  bool ok = read_rank_runs(o.runs, runs);
  if (runs.empty()) return 1;
  std::vector<RunClock> clocks;
  std::vector<Alignment> align;
  align_rank_runs(runs, clocks, align);
  std::vector<MergedRun> merged = merged_runs(runs, clocks);

  std::string error;
  const std::size_t slash = o.output.rfind('/');
  if (slash != std::string::npos && slash > 0 && !atomic_file::make_directories(o.output.substr(0, slash), error)) {
    say(error);
    return 1;
  }
  MergedTraces traces;
  ok = traces.open(o.output, formats, runs[0]) && ok;
  bool traces_ok = true;
  ok = traces.stream(runs, align, merged, o.quiet, traces_ok) && ok;
  std::vector<std::string> written;
  ok = traces.finish(o.output, traces_ok, written) && ok;
  ok = write_summaries(o.output, formats, merge_summaries(std::move(merged)), written) && ok;
  if (!o.quiet && !written.empty()) {
    std::string line = "merged " + std::to_string(runs.size()) + " runs into";
    for (std::size_t i = 0; i < written.size(); ++i) line += (i ? ", " : " ") + written[i];
    say(line);
  }
  return ok ? 0 : 1;
}

}  // namespace kob::cli
