// Several runs (the ranks of an MPI job) on one time line, as `kob merge` and `kob report` put
// them: the first run's (rank 0's) clock is the reference; the others are moved onto it with the
// PMPI layer's ping-pong offsets when every run has them (straight-line between MPI_Init's and
// MPI_Finalize's), else by each run's wall-clock reading at its start, else left as recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/formats/trace_events.hpp"
#include "common/timeline/raw_reader.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

// The PMPI layer's clock offset at one synchronisation: "LOCAL_NS OFFSET_NS RTT_NS", this rank's
// clock minus rank 0's (docs/raw-format.md).
struct ClockSync {
  bool present = false;
  std::uint64_t local_ns = 0;
  std::int64_t offset_ns = 0;
  std::uint64_t rtt_ns = 0;
};

// A run's facts, as the alignment and the merged outputs need them.
struct RankRun {
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

// Reads each run's facts (false when one could not be read: said, the others kept), ordered by
// rank, runs without one after in the order given; a rank given twice is said.
bool read_rank_runs(const std::vector<std::string>& args, std::vector<RankRun>& runs);

// Moves one run's times onto the reference time line: t - offset(t), the offset straight-line
// between its values at the two synchronisations (constant with one).
struct Alignment {
  std::int64_t off_start = 0, off_end = 0;
  std::uint64_t at_start = 0, at_end = 0;
  std::int64_t offset(std::uint64_t t) const;
  std::uint64_t at(std::uint64_t t) const;
};

// How a run was aligned: "reference" (the first), "mpi", "wall clock" or "none"; the offsets
// subtracted from its times at its start and end; mpi: the best ping-pong's round trip.
struct RunClock {
  std::string alignment;
  std::int64_t offset_start_ns = 0, offset_end_ns = 0;
  std::uint64_t rtt_ns = 0;
};

// The alignment of each run (runs[0] is the reference); one line on stderr when not every run has
// the MPI layer's offsets.
void align_rank_runs(const std::vector<RankRun>& runs, std::vector<RunClock>& clocks, std::vector<Alignment>& align);

// A TraceSink that moves every time by an Alignment on its way to another.
class ShiftSink : public trace::TraceSink {
 public:
  ShiftSink(trace::TraceSink& to, const Alignment& a) : to_(to), a_(a) {}
  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override { to_.process(pid, name, a_.at(t0)); }
  void track(const trace::TrackDesc& t) override { to_.track(t); }
  void event(const trace::Event& e) override;
  void flow(const trace::Flow& f) override;
  void window_end() override { to_.window_end(); }
  bool finish(const std::string& other) override { return to_.finish(other); }

 private:
  trace::TraceSink& to_;
  Alignment a_;
};

}  // namespace kob::cli
