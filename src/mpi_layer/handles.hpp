// What the MPI-free wrappers (mpi_calls.cpp) ask of the code that knows this layer's MPI
// (mpi_types.cpp): an MPI handle travels as a whole register and is turned into the real type only
// there, and only once the family check (family.cpp) has passed and the tool is attached.
#pragma once

#include <cstdint>

namespace kob_mpi {

using Handle = std::uintptr_t;

// count elements of type, in bytes (0 when unknown).
std::uint64_t payload(int count, Handle type);
// The number of ranks of comm (0 when unknown).
int comm_size(Handle comm);
// PMPI_Recv with a status of our own when the program ignores it: the bytes received and the
// sending rank, for the span.
int recv_recorded(void* buf, int count, Handle type, int source, int tag, Handle comm, void* status, std::uint64_t* bytes,
                  int* peer);

// Whether the process's MPI is the family this layer was built for (decided once, from symbols,
// before any MPI call of ours; the first "no" prints one line). Without a match the layer makes no
// MPI call of its own and records nothing: every wrapper only forwards.
bool family_matches();

}  // namespace kob_mpi
