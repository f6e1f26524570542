// Which environment variable the program's Kokkos reads for its tool library, so that `kob run`
// sets only that one: Kokkos 4.x reads KOKKOS_TOOLS_LIBS and warns on the program's stderr when
// KOKKOS_PROFILE_LIBRARY is set too; Kokkos before 3.7 reads only KOKKOS_PROFILE_LIBRARY.
#pragma once

#include <string>

namespace kob::cli {

struct KokkosTools {
  enum class Reads {
    ToolsLibs,       // KOKKOS_TOOLS_LIBS (Kokkos >= 3.7)
    ProfileLibrary,  // KOKKOS_PROFILE_LIBRARY (older)
    NoKokkos,        // no Kokkos in the program or its libraries: both (a child may be one)
    Unknown,         // cannot tell: both, and `why` says so
  };
  Reads reads = Reads::Unknown;
  std::string why;  // the Kokkos found ("libkokkoscore.so.4.6", "statically linked"), or why unknown
};

// From the program's ELF file: its libkokkoscore (DT_NEEDED: the file's strings, else the soname's
// version), else a Kokkos linked statically into it or into a library it needs (its strings).
// program: a path, or a name looked up in PATH as execvp would.
KokkosTools program_kokkos_tools(const std::string& program);

}  // namespace kob::cli
