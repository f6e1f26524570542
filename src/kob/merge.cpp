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
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

constexpr std::uint32_t kMergeFormats = kFormatPerfetto | kFormatOtf2 | kFormatSummary | kFormatJson | kFormatSqlite;

// The PMPI layer's clock offsets (fact::kMpiClockStart / End) are "LOCAL_NS OFFSET_NS RTT_NS", this rank's
// clock minus rank 0's (docs/raw-format.md).

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

struct ClockSync {
  bool present = false;
  std::uint64_t local_ns = 0;
  std::int64_t offset_ns = 0;
  std::uint64_t rtt_ns = 0;
};

ClockSync parse_sync(const std::string& v) {
  ClockSync s;
  unsigned long long local = 0, rtt = 0;
  long long off = 0;
  s.present = std::sscanf(v.c_str(), "%llu %lld %llu", &local, &off, &rtt) == 3;
  s.local_ns = local;
  s.offset_ns = off;
  s.rtt_ns = rtt;
  return s;
}

struct Run {
  std::string path;
  Facts facts;
  int rank = -1;
  std::string host, exe;
  std::uint64_t pid = 0;
  ClockSync start, end;
  bool has_wall = false;
  std::uint64_t wall_raw = 0, wall_real = 0;
  std::size_t given = 0;  // position on the command line
};

// Moves one run's times onto the reference time line: t - offset(t), the offset straight-line
// between its values at the two synchronisations (constant with one).
struct Alignment {
  std::int64_t off_start = 0, off_end = 0;
  std::uint64_t at_start = 0, at_end = 0;
  std::int64_t offset(std::uint64_t t) const {
    if (at_end <= at_start || off_end == off_start) return off_start;
    const double f = (double(t) - double(at_start)) / double(at_end - at_start);
    return off_start + static_cast<std::int64_t>(std::llround(f * double(off_end - off_start)));
  }
  std::uint64_t at(std::uint64_t t) const {
    const std::int64_t v = static_cast<std::int64_t>(t) - offset(t);
    return v < 0 ? 0 : static_cast<std::uint64_t>(v);
  }
};

class ShiftSink : public trace::TraceSink {
 public:
  ShiftSink(trace::TraceSink& to, const Alignment& a) : to_(to), a_(a) {}
  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override { to_.process(pid, name, a_.at(t0)); }
  void track(const trace::TrackDesc& t) override { to_.track(t); }
  void event(const trace::Event& e) override {
    trace::Event s = e;
    s.ts = a_.at(e.ts);
    if (e.phase == trace::Phase::Slice) s.end = std::max(s.ts, a_.at(e.end));
    to_.event(s);
  }
  void flow(const trace::Flow& f) override {
    trace::Flow s = f;
    s.from_ts = a_.at(f.from_ts);
    s.to_ts = a_.at(f.to_ts);
    to_.flow(s);
  }
  void window_end() override { to_.window_end(); }
  bool finish(const std::string& other) override { return to_.finish(other); }

 private:
  trace::TraceSink& to_;
  Alignment a_;
};

bool read_facts(const std::string& arg, std::size_t given, Run& run) {
  run.path = raw_path(arg);
  run.given = given;
  raw::Reader reader;
  std::string error;
  if (!reader.open(run.path, error)) {
    say(error);
    return false;
  }
  run.facts = run_facts(reader);
  const Facts& f = run.facts;
  try {
    run.rank = std::stoi(fact_value(f, fact::kSection, fact::kMpiRank, fact_value(f, fact::kSection, fact::kRank, "-1")));
    run.pid = std::stoull(fact_value(f, fact::kSection, fact::kPid, "0"));
  } catch (...) {
    run.rank = -1;
  }
  run.host = fact_value(f, fact::kSection, fact::kHost, "unknown host");
  run.exe = fact_value(f, fact::kSection, fact::kExe, "program");
  run.start = parse_sync(fact_value(f, fact::kSection, fact::kMpiClockStart));
  run.end = parse_sync(fact_value(f, fact::kSection, fact::kMpiClockEnd));
  unsigned long long raw = 0, real = 0;
  run.has_wall = std::sscanf(fact_value(f, fact::kSection, fact::kWallReference).c_str(), "%llu %llu", &raw, &real) == 2;
  run.wall_raw = raw;
  run.wall_real = real;
  return true;
}

}  // namespace

bool merge_formats_ok(std::uint32_t formats) {
  if ((formats & ~kMergeFormats) != 0) {
    say("--to: merge writes perfetto, otf2, sqlite, summary and json, not " + format_names(formats & ~kMergeFormats) + " (kob merge --help)");
    return false;
  }
  return true;
}

namespace {

// Reads each RUN's facts; false when one could not be read (the others are kept). By rank, runs
// without one after, in the order given.
bool read_runs(const MergeRequest& o, std::vector<Run>& runs) {
  bool ok = true;
  for (std::size_t i = 0; i < o.runs.size(); ++i) {
    Run r;
    if (read_facts(o.runs[i], i, r)) {
      runs.push_back(std::move(r));
    } else {
      ok = false;
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    if ((a.rank < 0) != (b.rank < 0)) return a.rank >= 0;
    return a.rank < b.rank;
  });
  std::set<int> ranks;
  for (const Run& r : runs)
    if (r.rank >= 0 && !ranks.insert(r.rank).second) say("rank " + std::to_string(r.rank) + " is given twice (" + r.path + ")");
  return ok;
}

// The time line is the first run's (rank 0's): the others are moved onto it with the PMPI
// layer's offsets when every run has them, else by their wall-clock references.
void align_runs(const std::vector<Run>& runs, std::vector<MergedRun>& merged, std::vector<Alignment>& align) {
  const Run& ref = runs[0];
  const bool all_mpi = std::all_of(runs.begin(), runs.end(), [](const Run& r) { return r.start.present; });
  merged.resize(runs.size());
  align.resize(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    MergedRun& m = merged[i];
    m.rank = r.rank;
    m.host = r.host;
    m.exe = r.exe;
    m.path = r.path;
    m.pid = r.pid;
    Alignment& a = align[i];
    if (all_mpi) {
      // Offsets are to rank 0: relative to the reference run's own (0 when it is rank 0).
      a.off_start = r.start.offset_ns - ref.start.offset_ns;
      a.at_start = r.start.local_ns;
      a.off_end = a.off_start;
      a.at_end = a.at_start;
      if (r.end.present && ref.end.present) {
        a.off_end = r.end.offset_ns - ref.end.offset_ns;
        a.at_end = r.end.local_ns;
      }
      m.alignment = i == 0 ? "reference" : "mpi";
      m.rtt_ns = r.start.rtt_ns;
    } else if (r.has_wall && ref.has_wall) {
      a.off_start = a.off_end = (static_cast<std::int64_t>(r.wall_raw) - static_cast<std::int64_t>(r.wall_real)) -
                                (static_cast<std::int64_t>(ref.wall_raw) - static_cast<std::int64_t>(ref.wall_real));
      m.alignment = i == 0 ? "reference" : "wall clock";
    } else {
      m.alignment = i == 0 ? "reference" : "none";
    }
    m.offset_start_ns = a.off_start;
    m.offset_end_ns = a.off_end;
  }
  if (!all_mpi && runs.size() > 1) {
    bool any_wall = std::any_of(merged.begin() + 1, merged.end(), [](const MergedRun& m) { return m.alignment == "wall clock"; });
    say(std::string("not every run has the MPI layer's clock offsets (run the ranks with `kob run --mpi`): ") +
        (any_wall ? "aligned by each run's wall-clock reading at its start, as exact as the hosts' clocks agree (NTP: often ms)"
                  : "no clock reference either: times as recorded"));
  }
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
  bool open(const std::string& out, std::uint32_t formats, const Run& ref) {
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
  bool stream(std::vector<Run>& runs, const std::vector<Alignment>& align, std::vector<MergedRun>& merged, bool quiet,
              bool& traces_ok) {
    std::set<std::uint64_t> pids;
    std::string error;
    bool ok = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      Run& r = runs[i];
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
      merged[i].summary = stream_run(data, r.facts, shifted, info, db.get(), [a](std::uint64_t t) { return a.at(t); });
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
  std::vector<Run> runs;
  bool ok = read_runs(o, runs);
  if (runs.empty()) return 1;
  std::vector<MergedRun> merged;
  std::vector<Alignment> align;
  align_runs(runs, merged, align);

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
