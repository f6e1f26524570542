#include "kob/run_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

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

bool read_rank_run(const std::string& arg, std::size_t given, RankRun& run) {
  run.given = given;
  raw::Reader reader;
  std::string error;
  if (!open_run(reader, arg, run.path, error)) {
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

bool read_rank_runs(const std::vector<std::string>& args, std::vector<RankRun>& runs) {
  bool ok = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    RankRun r;
    if (read_rank_run(args[i], i, r)) {
      runs.push_back(std::move(r));
    } else {
      ok = false;
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const RankRun& a, const RankRun& b) {
    if ((a.rank < 0) != (b.rank < 0)) return a.rank >= 0;
    return a.rank < b.rank;
  });
  std::set<int> ranks;
  for (const RankRun& r : runs)
    if (r.rank >= 0 && !ranks.insert(r.rank).second) say("rank " + std::to_string(r.rank) + " is given twice (" + r.path + ")");
  return ok;
}

std::int64_t Alignment::offset(std::uint64_t t) const {
  if (at_end <= at_start || off_end == off_start) return off_start;
  const double f = (double(t) - double(at_start)) / double(at_end - at_start);
  return off_start + static_cast<std::int64_t>(std::llround(f * double(off_end - off_start)));
}

std::uint64_t Alignment::at(std::uint64_t t) const {
  const std::int64_t v = static_cast<std::int64_t>(t) - offset(t);
  return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

void align_rank_runs(const std::vector<RankRun>& runs, std::vector<RunClock>& clocks, std::vector<Alignment>& align) {
  clocks.assign(runs.size(), RunClock());
  align.assign(runs.size(), Alignment());
  if (runs.empty()) return;
  const RankRun& ref = runs[0];
  const bool all_mpi = std::all_of(runs.begin(), runs.end(), [](const RankRun& r) { return r.start.present; });
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RankRun& r = runs[i];
    RunClock& m = clocks[i];
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
    bool any_wall = std::any_of(clocks.begin() + 1, clocks.end(), [](const RunClock& m) { return m.alignment == "wall clock"; });
    say(std::string("not every run has the MPI layer's clock offsets (run the ranks with `kob run --mpi`): ") +
        (any_wall ? "aligned by each run's wall-clock reading at its start, as exact as the hosts' clocks agree (NTP: often ms)"
                  : "no clock reference either: times as recorded"));
  }
}

void ShiftSink::event(const trace::Event& e) {
  trace::Event s = e;
  s.ts = a_.at(e.ts);
  if (e.phase == trace::Phase::Slice) s.end = std::max(s.ts, a_.at(e.end));
  to_.event(s);
}

void ShiftSink::flow(const trace::Flow& f) {
  trace::Flow s = f;
  s.from_ts = a_.at(f.from_ts);
  s.to_ts = a_.at(f.to_ts);
  to_.flow(s);
}

}  // namespace kob::cli
