// Which MPI a program is built with, from its ELF dynamic section (DT_NEEDED): the PMPI layer that
// `kob run --mpi` preloads must match its ABI.
#pragma once

#include <string>

namespace kob::cli {

struct MpiFamily {
  std::string layer;    // "openmpi", "mpich", or "" when it cannot tell
  std::string library;  // the MPI library named (libmpi.so.40, libmpich.so.12, ...), or why not
};

// program: a path, or a name looked up in PATH as execvp would.
MpiFamily program_mpi_family(const std::string& program);

}  // namespace kob::cli
