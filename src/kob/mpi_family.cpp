#include "kob/mpi_family.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace kob::cli {

namespace {

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t at = 0;
  while (at <= dirs.size()) {
    const std::size_t colon = dirs.find(':', at);
    const std::string dir = dirs.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  return name;
}

// The DT_NEEDED names of an ELF file (empty when it is not one or has none).
std::vector<std::string> needed(const std::string& path) {
  std::vector<std::string> out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  elf_version(EV_CURRENT);
  if (Elf* e = elf_begin(fd, ELF_C_READ, nullptr)) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(e, scn)) != nullptr) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNAMIC) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      const std::size_t n = sh.sh_entsize != 0 ? sh.sh_size / sh.sh_entsize : 0;
      for (std::size_t i = 0; data != nullptr && i < n; ++i) {
        GElf_Dyn dyn;
        if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag != DT_NEEDED) continue;
        if (const char* s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)) out.emplace_back(s);
      }
    }
    elf_end(e);
  }
  close(fd);
  return out;
}

}  // namespace

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
