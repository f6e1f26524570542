// A stand-in for libkokkoscore for kob run's Kokkos detection (no Kokkos 4 is installed here).
// Built with FAKE_KOKKOS4 and the soname libkokkoscore.so.4.6 it reads KOKKOS_TOOLS_LIBS and warns
// on stderr when KOKKOS_PROFILE_LIBRARY is set, with the words Kokkos 4.6.01 uses; without it, and
// the soname libkokkoscore.so.3.4, it reads KOKKOS_PROFILE_LIBRARY only, as Kokkos 3.4.1 does.
#include <cstdio>
#include <cstdlib>

extern "C" void fake_kokkos_initialize() {
#ifdef FAKE_KOKKOS4
  if (std::getenv("KOKKOS_PROFILE_LIBRARY") != nullptr)
    std::fprintf(stderr, "Warning: environment variable 'KOKKOS_PROFILE_LIBRARY' is deprecated. Use 'KOKKOS_TOOLS_LIBS' instead. Raised by Kokkos::initialize().\n");
  const char* lib = std::getenv("KOKKOS_TOOLS_LIBS");
#else
  const char* lib = std::getenv("KOKKOS_PROFILE_LIBRARY");
#endif
  std::printf("tool library read: %s\n", lib != nullptr ? "set" : "unset");
}
