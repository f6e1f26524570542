// A Kokkos (OpenMP backend) program that runs N tiny kernels, then prints its own peak and current
// resident memory (VmHWM, VmRSS from /proc/self/status, in KiB) just before Kokkos::finalize:
// the tool writes its files at the end of the run, so these figures cover the recording only.
//
//   many_tiny_kernels N
//
// stdout: "kernels N sum S" then "VmHWM K" and "VmRSS K".
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// The value of one "Name:   123 kB" line of /proc/self/status, -1 when absent.
long status_kib(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  const std::size_t n = std::strlen(name);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, name, n) == 0 && line[n] == ':') {
      v = std::strtol(line + n + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long kernels = argc > 1 ? std::atol(argv[1]) : 1000;
  Kokkos::initialize(argc, argv);
  long sum = 0;
  {
    Kokkos::View<long*> v("v", 64);
    for (long k = 0; k < kernels; ++k) {
      Kokkos::parallel_for("tiny", 64, KOKKOS_LAMBDA(int i) { v(i) += i; });
    }
    Kokkos::fence();
    Kokkos::parallel_reduce("sum", 64, KOKKOS_LAMBDA(int i, long& s) { s += v(i); }, sum);
  }
  std::printf("kernels %ld sum %ld\n", kernels, sum);
  std::printf("VmHWM %ld\nVmRSS %ld\n", status_kib("VmHWM"), status_kib("VmRSS"));
  std::fflush(stdout);
  Kokkos::finalize();
  return 0;
}
