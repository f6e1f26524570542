// The summary of several runs put on one time line (kob merge): per kernel and per region, the
// time of each rank (or process) side by side, min / mean / max over the ranks and the imbalance
// between them; how each rank's clock was aligned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"

namespace kob {

struct MergedRun {
  int rank = -1;  // -1: not an MPI rank (the runs are then numbered in the given order)
  std::string host, exe, path;
  std::uint64_t pid = 0;
  // How its times were moved onto the reference run's time line: "mpi" (the PMPI layer's
  // ping-pong offsets to rank 0, at MPI_Init and MPI_Finalize, linear between), "wall clock"
  // (each run's CLOCK_REALTIME reading at its start), "none" (nothing to align with: as recorded),
  // or "reference" (the run the others are aligned to).
  std::string alignment;
  std::int64_t offset_start_ns = 0, offset_end_ns = 0;  // subtracted from its times (at its start, its end)
  std::uint64_t rtt_ns = 0;                              // mpi: the best ping-pong's round trip
  Summary summary;
};

// Per kernel (name, kind), region (path) or OpenMP construct (kind and source location; name: its
// label "function file:line") over the runs.
struct AcrossRuns {
  std::string name, kind;
  std::string device;  // kernels: the execution space (a row per name, kind and space)
  bool kokkos_runtime = false;  // constructs: Kokkos' own (OmpConstructStats::kokkos_runtime), listed last
  std::uint64_t runs_with = 0;           // runs in which it ran
  std::uint64_t calls_min = 0, calls_max = 0;
  std::uint64_t min = 0, max = 0;        // ns, total time of one run (0 for a run without it)
  double mean = 0;
  int min_rank = -1, max_rank = -1;      // the runs (ranks) of min and max
  // (max - mean) / max: 0 when every run spends the same time; the share of the slowest run's
  // time the others spend waiting for it at the next synchronisation.
  double imbalance() const { return max ? (double(max) - mean) / double(max) : 0.0; }
};

struct MergedSummary {
  std::vector<MergedRun> runs;         // by rank
  std::vector<AcrossRuns> kernels;     // by max total time, largest first
  std::vector<AcrossRuns> regions;     // by max inclusive time, largest first
  std::vector<AcrossRuns> mpi_calls;   // blocking MPI calls (the MPI layer's spans), by max total time
  std::vector<AcrossRuns> constructs;  // OpenMP constructs outside Kokkos kernels, by max total time
};

MergedSummary merge_summaries(std::vector<MergedRun> runs);
std::string merged_summary_text(const MergedSummary& m);
std::string merged_summary_json(const MergedSummary& m);

}  // namespace kob
