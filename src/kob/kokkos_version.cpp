#include "kob/kokkos_version.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "kob/elf_deps.hpp"

namespace kob::cli {

namespace {

using Reads = KokkosTools::Reads;

// A Kokkos reads the variables it names: 3.7 and later name KOKKOS_TOOLS_LIBS (4.x names the
// other too, in its deprecation warning), older ones only KOKKOS_PROFILE_LIBRARY.
Reads reads_of(const std::string& file) {
  if (file_contains(file, "KOKKOS_TOOLS_LIBS")) return Reads::ToolsLibs;
  if (file_contains(file, "KOKKOS_PROFILE_LIBRARY")) return Reads::ProfileLibrary;
  return Reads::NoKokkos;
}

// libkokkoscore.so.MAJOR.MINOR as Kokkos' own build names it; Trilinos builds name it after the
// Trilinos version (libkokkoscore.so.13), which says nothing of Kokkos': Unknown.
Reads reads_of_soname(const std::string& soname) {
  const std::size_t at = soname.find(".so.");
  if (at == std::string::npos) return Reads::Unknown;
  char* end = nullptr;
  const long major = std::strtol(soname.c_str() + at + 4, &end, 10);
  const long minor = end != nullptr && *end == '.' ? std::strtol(end + 1, nullptr, 10) : 0;
  if (major >= 10 || major < 1) return Reads::Unknown;
  return major > 3 || (major == 3 && minor >= 7) ? Reads::ToolsLibs : Reads::ProfileLibrary;
}

// Libraries of the system and of the compilers: never a Kokkos (not worth reading).
bool system_library(const std::string& name) {
  for (const char* p : {"libc.so", "libm.so", "libstdc++", "libgcc_s", "libomp", "libgomp", "libpthread", "libdl.so",
                        "librt.so", "ld-linux", "libmpi", "libopen-", "libcuda", "libhwloc"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

bool is_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

}  // namespace

KokkosTools program_kokkos_tools(const std::string& program) {
  const std::string path = find_in_path(program);
  // A program that is not there: running it says so; nothing to tell here.
  if (access(path.c_str(), R_OK) != 0) return {Reads::NoKokkos, ""};
  if (!is_elf(path)) return {Reads::Unknown, path + " is not an ELF program (a script?)"};
  const std::vector<std::string> libs = needed(path);
  const std::vector<std::string> dirs = library_dirs(path);
  for (const std::string& l : libs) {
    if (l.rfind("libkokkoscore.so", 0) != 0) continue;
    const std::string file = resolve_library(l, dirs);
    const Reads r = file.empty() ? Reads::NoKokkos : reads_of(file);
    if (r != Reads::NoKokkos) return {r, l};
    const Reads by_name = reads_of_soname(l);
    if (by_name != Reads::Unknown) return {by_name, l};
    return {Reads::Unknown, "its " + l + (file.empty() ? " was not found" : " names neither variable")};
  }
  // A static Kokkos: in the program, or in a library of its own.
  if (const Reads r = reads_of(path); r != Reads::NoKokkos) return {r, "linked statically into " + path};
  for (const std::string& l : libs) {
    if (system_library(l)) continue;
    const std::string file = resolve_library(l, dirs);
    if (file.empty()) continue;
    if (const Reads r = reads_of(file); r != Reads::NoKokkos) return {r, "linked into " + l};
  }
  return {Reads::NoKokkos, ""};
}

}  // namespace kob::cli
