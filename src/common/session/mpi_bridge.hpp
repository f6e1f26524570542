// The hand-over between the PMPI layer (libkob_mpi.so, LD_PRELOADed: in the global scope) and the
// tool library (dlopen'ed by Kokkos or libomp, maybe RTLD_LOCAL, maybe after MPI_Init, maybe
// never). Only the tool knows when it starts, so it looks the layer up (dlsym(RTLD_DEFAULT,
// "kob_mpi_layer_attach")) and hands it a table of its own functions; the layer never links to
// the tool. Plain C types only: the two sides are built separately and share nothing else.
#pragma once

#include <cstdint>

extern "C" {

// Phases of the clock measurement (clock_sync's phase).
enum : std::int32_t { kob_mpi_clock_start = 0, kob_mpi_clock_end = 1 };

// MPI calls the layer wraps (mpi_begin/mpi_end's call); the names are kob_mpi_call_name's.
enum : std::uint32_t {
  kob_mpi_send = 0,
  kob_mpi_recv,
  kob_mpi_wait,
  kob_mpi_waitall,
  kob_mpi_barrier,
  kob_mpi_bcast,
  kob_mpi_reduce,
  kob_mpi_allreduce,
  kob_mpi_allgather,
  kob_mpi_alltoall,
  kob_mpi_gather,
  kob_mpi_scatter,
  kob_mpi_sendrecv,
  kob_mpi_waitany,
  kob_mpi_waitsome,
  kob_mpi_allgatherv,
  kob_mpi_alltoallv,
  kob_mpi_gatherv,
  kob_mpi_scatterv,
  kob_mpi_reduce_scatter,
  kob_mpi_scan,
  kob_mpi_call_count
};

// Version 1 of the tool's table. A later version only appends members; `size` tells the layer
// which ones the tool has.
struct kob_mpi_tool {
  std::uint32_t version;  // 1
  std::uint32_t size;     // sizeof(kob_mpi_tool) as the tool was built
  // This rank's clock against rank 0's on MPI_COMM_WORLD: local_ns is this rank's clock
  // (CLOCK_MONOTONIC_RAW ns, plus KOB_TEST_CLOCK_SHIFT_NS) at the middle of the best round trip,
  // offset_ns this clock minus rank 0's there, rtt_ns that round trip. Once per phase.
  void (*clock_sync)(std::int32_t phase, std::int32_t rank, std::int32_t size, std::int64_t local_ns,
                     std::int64_t offset_ns, std::int64_t rtt_ns);
  // MPI_Finalize is under way, the end offsets were handed over (when they could be measured):
  // the tool may write its files now.
  void (*finalizing)();
  // Around each wrapped call, on the calling thread (may be null: not recorded).
  void (*mpi_begin)(std::uint32_t call);
  void (*mpi_end)(std::uint32_t call, std::uint64_t bytes, std::int32_t peer);
};

// Exported by libkob_mpi.so. Returns 1 when attached. Hands over at once what was measured
// already; the table must stay valid until the process ends.
typedef int (*kob_mpi_layer_attach_fn)(const kob_mpi_tool* tool);

}  // extern "C"

// Names of the calls above, for the trace and the summary.
inline const char* kob_mpi_call_name(std::uint32_t call) {
  static const char* const names[] = {"MPI_Send",      "MPI_Recv",   "MPI_Wait",      "MPI_Waitall",
                                      "MPI_Barrier",   "MPI_Bcast",  "MPI_Reduce",    "MPI_Allreduce",
                                      "MPI_Allgather", "MPI_Alltoall", "MPI_Gather",  "MPI_Scatter",
                                      "MPI_Sendrecv", "MPI_Waitany", "MPI_Waitsome", "MPI_Allgatherv",
                                      "MPI_Alltoallv", "MPI_Gatherv", "MPI_Scatterv", "MPI_Reduce_scatter",
                                      "MPI_Scan"};
  static_assert(sizeof(names) / sizeof(names[0]) == kob_mpi_call_count, "a name per call");
  return call < kob_mpi_call_count ? names[call] : "MPI_?";
}
