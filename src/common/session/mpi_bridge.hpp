// The hand-over between the PMPI layer (libkob_mpi_<family>.so, LD_PRELOADed: in the global scope) and the
// tool library (dlopen'ed by Kokkos or libomp, maybe RTLD_LOCAL, maybe after MPI_Init, maybe
// never). Only the tool knows when it starts, so it looks the layer up (dlsym(RTLD_DEFAULT,
// "kob_mpi_layer_attach")) and hands it a table of its own functions; the layer never links to
// the tool. Plain C types only: the two sides are built separately and share nothing else.
#pragma once

#include <cstdint>

#include "common/record/mpi_calls.hpp"

extern "C" {

// Phases of the clock measurement (clock_sync's phase).
enum : std::int32_t { kob_mpi_clock_start = 0, kob_mpi_clock_end = 1 };

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
  // Around each wrapped call (mpi_calls.hpp), on the calling thread (may be null: not recorded).
  void (*mpi_begin)(std::uint32_t call);
  void (*mpi_end)(std::uint32_t call, std::uint64_t bytes, std::int32_t peer);
};

// Exported by libkob_mpi_<family>.so. Returns 1 when attached. Hands over at once what was measured
// already; the table must stay valid until the process ends.
typedef int (*kob_mpi_layer_attach_fn)(const kob_mpi_tool* tool);

}  // extern "C"
