// The layer's MPI handles as their real types, for the spans of mpi_calls.cpp. Only reached when
// the family matches (the tool attaches only then): a handle arrives as a whole register and its
// low bytes are this MPI's handle (an int in the MPICH family, a pointer in Open MPI).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "mpi_layer/weak_mpi.hpp"

#include <cstring>

#include "mpi_layer/handles.hpp"

namespace kob_mpi {

namespace {
template <class T>
T as(Handle h) {
  static_assert(sizeof(T) <= sizeof(Handle));
  T t;
  std::memcpy(&t, &h, sizeof t);  // the low bytes, on little-endian x86-64 and AArch64
  return t;
}
}  // namespace

std::uint64_t payload(int count, Handle type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(as<MPI_Datatype>(type), &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

int comm_size(Handle comm) {
  int n = 0;
  return PMPI_Comm_size(as<MPI_Comm>(comm), &n) == MPI_SUCCESS ? n : 0;
}

int recv_recorded(void* buf, int count, Handle type, int source, int tag, Handle comm, void* status, std::uint64_t* bytes,
                  int* peer) {
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : static_cast<MPI_Status*>(status);
  const MPI_Datatype t = as<MPI_Datatype>(type);
  const int rc = PMPI_Recv(buf, count, t, source, tag, as<MPI_Comm>(comm), st);
  int got = 0;
  if (rc != MPI_SUCCESS || PMPI_Get_count(st, t, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = 0;
  *bytes = payload(got, type);
  *peer = rc == MPI_SUCCESS ? st->MPI_SOURCE : source;
  return rc;
}

}  // namespace kob_mpi
