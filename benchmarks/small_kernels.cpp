// small_kernels.cpp - a run of many small OpenMP-backend Kokkos kernels, the kind of run where a
// tool's cost shows: each kernel does a little real work (about 100 us on 2 threads here, so ~10 k
// kernels per second), and with OMPT every kernel also brings ~20 OpenMP events (parallel region,
// implicit tasks, loop, barriers) on top of the Kokkos begin/end.
//
// Usage: small_kernels [Kokkos options] [N [WORK]]   N kernels (default 20000) of WORK elements
// (default 1500). Prints the checksum (so the work is not optimised away) and nothing else: the
// benchmark (benchmarks/run_stream.sh) times the whole process, start and exit included.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  {
    long n = 20000, work = 1500;
    int found = 0;
    for (int i = 1; i < argc; ++i) {
      if (argv[i][0] == '-') continue;
      (found++ == 0 ? n : work) = std::strtol(argv[i], nullptr, 10);
    }
    Kokkos::View<double*> x("x", work);
    Kokkos::parallel_for("init", work, KOKKOS_LAMBDA(const int i) { x(i) = 1.0 + 1e-6 * i; });
    double total = 0.0;
    for (long k = 0; k < n; ++k) {
      double sum = 0.0;
      Kokkos::parallel_reduce(
          "small_kernel", work,
          KOKKOS_LAMBDA(const int i, double& s) {
            double v = x(i);
            for (int r = 0; r < 8; ++r) v = std::sqrt(v * v + 1e-3);
            s += v;
          },
          sum);
      total += sum;
    }
    std::printf("checksum %.6e\n", total);
  }
  Kokkos::finalize();
  return 0;
}
