// empty_parallel.cpp - cost of an empty OpenMP parallel region, with or without an OMPT tool.
//
// Runs N empty `#pragma omp parallel` regions in a tight loop and prints
//   threads: T
//   regions: N
//   ns per region: X
//   page faults per 1000 regions: F
// T is the team size (omp_get_num_threads inside a warm-up region), X the wall-clock time of the
// loop (std::chrono::steady_clock) divided by N, F the minor page faults taken during the loop
// (getrusage): a tool that writes into fresh memory pays for them. With an OMPT tool attached
// (OMP_TOOL_LIBRARIES=<lib>) each region also calls the tool's parallel_begin, implicit_task
// (begin, end), parallel_end and, with more than one thread, barrier callbacks.
//
// Usage: empty_parallel [N]      (N defaults to 1,000,000)
//
// The loop lives in launch_loop(int), which is never inlined, so that callgrind can count only
// the regions:
//   valgrind --tool=callgrind --toggle-collect='launch_loop*' ./empty_parallel 20000
// Built with clang++ -fopenmp=libomp (benchmarks/meson.build); measured by benchmarks/run_ompt.sh.
#include <omp.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {
long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}
}  // namespace

// Not static and not inlined: its demangled symbol, "launch_loop(int)", is what callgrind's
// --toggle-collect='launch_loop*' matches.
__attribute__((noinline)) void launch_loop(int n) {
  for (int k = 0; k < n; ++k) {
#pragma omp parallel
    {
      __asm__ volatile("" ::: "memory");  // an empty body the compiler cannot reason about
    }
  }
}

int main(int argc, char* argv[]) {
  long n = 1000000;
  if (argc > 1) {
    char* end = nullptr;
    n = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || n <= 0 || n > 2000000000L) {
      std::fprintf(stderr, "empty_parallel: expected a positive number of regions, got '%s'\n", argv[1]);
      return 2;
    }
  }
  // Warm-up, outside launch_loop so that callgrind does not count it: the runtime creates its
  // threads, the tool registers them and allocates its first buffers.
  int threads = 0;
  for (int k = 0; k < 100; ++k) {
#pragma omp parallel
    {
      if (omp_get_thread_num() == 0) threads = omp_get_num_threads();
    }
  }
  const long f0 = minor_faults();
  const auto t0 = std::chrono::steady_clock::now();
  launch_loop(static_cast<int>(n));
  const auto t1 = std::chrono::steady_clock::now();
  const long f1 = minor_faults();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  std::printf("threads: %d\n", threads);
  std::printf("regions: %ld\n", n);
  std::printf("ns per region: %.2f\n", ns / static_cast<double>(n));
  std::printf("page faults per 1000 regions: %.2f\n", 1000.0 * static_cast<double>(f1 - f0) / static_cast<double>(n));
  // As tiny_kernels: the time after the loop (the tool's exit work) is measured from this line.
  std::printf("loop end steady ns: %lld\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1.time_since_epoch()).count()));
  return 0;
}
