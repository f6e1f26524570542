// Which MPI ABI the process has, told from symbols alone (no MPI call, no handle): Open MPI's
// predefined communicator object `ompi_mpi_comm_world` exists in Open MPI (and its derivatives)
// only; an MPI without it is taken for the MPICH ABI family (MPICH, Intel MPI, MVAPICH, Cray
// MPICH), whose handles are ints. No <mpi.h> here: the check is the same in both builds.
#include <cstdio>

#include "mpi_layer/handles.hpp"

extern "C" {
extern char ompi_mpi_comm_world __attribute__((weak));
int PMPI_Init(int*, char***) __attribute__((weak));
}

namespace kob_mpi {

namespace {

#if defined(KOB_MPI_OPEN_MPI)
constexpr bool kBuiltForOpenMpi = true;
constexpr const char* kBuiltFor = "Open MPI";
#else
constexpr bool kBuiltForOpenMpi = false;
constexpr const char* kBuiltFor = "the MPICH family (MPICH, Intel MPI, MVAPICH, Cray MPICH)";
#endif

bool decide() {
  if (&PMPI_Init == nullptr) return false;  // no MPI in this process: nothing will call us
  const bool open_mpi = &ompi_mpi_comm_world != nullptr;
  if (open_mpi == kBuiltForOpenMpi) return true;
  std::fprintf(stderr,
               "kob: this PMPI layer is built for %s but the program's MPI is %s: it only forwards the MPI calls "
               "(no clock offsets to rank 0, no MPI spans); `kob run --mpi` preloads the matching layer\n",
               kBuiltFor, open_mpi ? "Open MPI" : "not Open MPI (the MPICH family)");
  return false;
}

}  // namespace

bool family_matches() {
  static const bool matches = decide();
  return matches;
}

}  // namespace kob_mpi
