#include "kob/mpi_family.hpp"

#include <vector>

#include "kob/elf_deps.hpp"

namespace kob::cli {

MpiFamily program_mpi_family(const std::string& program) {
  const std::string path = find_in_path(program);
  const std::vector<std::string> libs = needed(path);
  if (libs.empty()) return {"", path + " names no shared library (not a dynamically linked program, or not found)"};
  for (const std::string& l : libs) {
    // Open MPI's C library is libmpi.so.40 (3.x to 5.x; 2.x: .so.20). libmpi.so.12 is the MPICH
    // ABI's name (MPICH, Intel MPI, MVAPICH), libmpich.so.12 MPICH's own.
    if (l.rfind("libmpi.so.40", 0) == 0 || l.rfind("libmpi.so.20", 0) == 0) return {"openmpi", l};
    if (l.rfind("libmpich.so", 0) == 0 || l.rfind("libmpi.so.12", 0) == 0 || l.rfind("libmpi_cray.so", 0) == 0 ||
        l.rfind("libmpi_intel.so", 0) == 0)
      return {"mpich", l};
  }
  return {"", path + " names no MPI library of its own (libmpi.so.40, libmpich.so.12, libmpi.so.12)"};
}

}  // namespace kob::cli
