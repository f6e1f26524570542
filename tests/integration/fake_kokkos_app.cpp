// A program linked against fake_kokkoscore (libkokkoscore.so.4.6 or .so.3.4): "initializes" it
// and prints which of the two Kokkos tool variables it was started with.
#include <cstdio>
#include <cstdlib>

extern "C" void fake_kokkos_initialize();

int main() {
  fake_kokkos_initialize();
  std::printf("KOKKOS_TOOLS_LIBS %s, KOKKOS_PROFILE_LIBRARY %s\n", std::getenv("KOKKOS_TOOLS_LIBS") ? "set" : "unset",
              std::getenv("KOKKOS_PROFILE_LIBRARY") ? "set" : "unset");
  return 0;
}
