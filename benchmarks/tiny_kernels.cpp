// tiny_kernels.cpp - launch overhead of Kokkos kernels, with or without a Kokkos Tools library.
//
// Launches N labelled parallel_for kernels over a range of length 1 in a tight loop and prints
//   kernels: N
//   ns per kernel: X
//   page faults per 1000 kernels: F
// X is the wall-clock time of the launch loop (std::chrono::steady_clock) divided by N. With a
// tool loaded (KOKKOS_PROFILE_LIBRARY=<lib> or --kokkos-tools-library=<lib>) every launch also
// calls kokkosp_begin_parallel_for and kokkosp_end_parallel_for, so the difference between runs
// with and without a tool is the cost of those two hooks. F (minor page faults taken during the
// loop, getrusage) shows a tool that writes into fresh memory: on a VM a fault costs microseconds.
//
// Usage: tiny_kernels [Kokkos options] [N]      (N defaults to 1,000,000)
//
// The loop lives in launch_loop(int), which is never inlined, so that callgrind can count only
// the launches:
//   valgrind --tool=callgrind --toggle-collect='launch_loop*' ./tiny_kernels 20000
// Builds against any host Kokkos 3.4.x (Serial or OpenMP default execution space); see
// benchmarks/meson.build for the two builds and benchmarks/run.sh (Serial) and run_ompt.sh (OpenMP)
// for the measurements.
#include <Kokkos_Core.hpp>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__clang__)
#define KOB_BENCH_NOINLINE __attribute__((noinline))
#else
#define KOB_BENCH_NOINLINE __attribute__((noinline, noclone))
#endif

namespace {
long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// The kernel body: one store, so the launch (and the tool's hooks) is all that is measured.
struct Touch {
  int* data;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { data[i] += 1; }
};

}  // namespace

// Not static and not inlined: its demangled symbol, "launch_loop(int, int*)", is what callgrind's
// --toggle-collect='launch_loop*' matches (callgrind compares demangled names).
KOB_BENCH_NOINLINE void launch_loop(int n, int* data) {
  const Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace> one(0, 1);
  for (int k = 0; k < n; ++k) {
    Kokkos::parallel_for("tiny_kernel", one, Touch{data});
  }
}

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  int status = 0;
  {
    long n = 1000000;
    // Kokkos removes the options it knows; the first remaining non-option argument is N.
    for (int i = 1; i < argc; ++i) {
      if (argv[i][0] == '-') continue;
      char* end = nullptr;
      n = std::strtol(argv[i], &end, 10);
      if (end == argv[i] || *end != '\0' || n <= 0 || n > 2000000000L) {
        std::fprintf(stderr, "tiny_kernels: expected a positive number of kernels, got '%s'\n", argv[i]);
        status = 2;
      }
      break;
    }
    if (status == 0) {
      int value = 0;
      // Warm-up, outside launch_loop so that callgrind does not count it: the tool interns the
      // name, allocates its first buffer chunk, etc.
      for (int k = 0; k < 100; ++k) {
        Kokkos::parallel_for("tiny_kernel", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 1), Touch{&value});
      }
      Kokkos::fence();
      const long f0 = minor_faults();
      const auto t0 = std::chrono::steady_clock::now();
      launch_loop(static_cast<int>(n), &value);
      Kokkos::fence();
      const auto t1 = std::chrono::steady_clock::now();
      const long f1 = minor_faults();
      const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
      if (value != n + 100) {
        std::fprintf(stderr, "tiny_kernels: wrong count %d (expected %ld)\n", value, n + 100);
        status = 1;
      }
      std::printf("kernels: %ld\n", n);
      std::printf("ns per kernel: %.2f\n", ns / static_cast<double>(n));
      std::printf("page faults per 1000 kernels: %.2f\n", 1000.0 * static_cast<double>(f1 - f0) / static_cast<double>(n));
      // steady_clock is CLOCK_MONOTONIC: a benchmark that notes when the process ended gets the
      // time spent after the loop (Kokkos::finalize and the tool's exit work) from this line.
      std::printf("loop end steady ns: %lld\n",
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1.time_since_epoch()).count()));
      std::fflush(stdout);
    }
  }
  Kokkos::finalize();
  return status;
}
