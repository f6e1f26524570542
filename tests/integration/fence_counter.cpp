// LD_PRELOADed into a program linked with a shared Kokkos: counts the calls of Kokkos::fence()
// (Kokkos' global fencing around the tool hooks and the tool-invoked fence both go through it)
// and writes the count to the file named by FENCE_COUNT_FILE at exit.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {
std::atomic<long> g_fences{0};

__attribute__((destructor)) void report() {
  if (const char* path = std::getenv("FENCE_COUNT_FILE")) {
    if (std::FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "%ld\n", g_fences.load());
      std::fclose(f);
    }
  }
}
}  // namespace

namespace Kokkos {
__attribute__((visibility("default"))) void fence() {
  ++g_fences;
  static auto real = reinterpret_cast<void (*)()>(dlsym(RTLD_NEXT, "_ZN6Kokkos5fenceEv"));
  if (real) real();
}
}  // namespace Kokkos
