// The MPI calls the PMPI layer wraps, as an MpiBegin/MpiEnd record carries them (its sub field),
// and their names for the trace and the summary. Plain C so that the layer (built against MPI,
// separately from the tool) and the tool agree on the numbers; session/mpi_bridge.hpp hands them over.
#pragma once

#include <cstdint>

extern "C" {

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

}  // extern "C"

// Names of the calls above.
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
