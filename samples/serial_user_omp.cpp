// serial_user_omp.cpp - a Kokkos program for the Serial backend whose kernel bodies contain the
// user's own OpenMP parallel regions (#pragma omp parallel for), so every such Kokkos kernel causes
// a known number of OpenMP parallel regions. Built against a host Kokkos 3.4.x whose default
// execution space is Serial (Debian's libtrilinos-kokkos-dev), with -fopenmp so the pragmas are
// real OpenMP regions (clang++-22 -fopenmp: LLVM libomp, which has OMPT; g++ -fopenmp gives libgomp,
// which has no OMPT, so use clang++ for OMPT checks). If Kokkos' default execution space is not
// Serial the kernels still run, but Kokkos then opens its own parallel regions as well.
//
// Build: clang++-22 -std=c++17 -O2 -fopenmp -isystem /usr/include/trilinos serial_user_omp.cpp \
//          -o serial_user_omp -ltrilinos_kokkoscore
//
// Deterministic (fixed sizes, integer-valued data). Exact stdout (4 lines):
//
//   for kernel sum = 29700
//   reduce kernel sum = 15000
//   outside sum = 4950
//   done
//
// HOOK CALLS (verified on Debian's Serial Kokkos 3.4.1 with a logging Kokkos tool and a counting
// OMPT tool, any OMP_NUM_THREADS):
//
// Kokkos kernels (name: kind x calls, devid 0x0, region):
//   "Kokkos::View::initialization [data]"  parallel_for    x1  region "user_omp"   0 omp regions
//   "omp_inside_for"                       parallel_for    x2  region "user_omp"   3 omp regions per call
//                                           (RangePolicy(0,3); each iteration: omp parallel for num_threads(2))
//   "omp_inside_reduce"                    parallel_reduce x1  region "user_omp"   1 omp region
//                                           (RangePolicy(0,1); omp parallel for num_threads(2) reduction)
//   "check_sum"                            parallel_reduce x1  region "user_omp"   0 omp regions
// Regions: "user_omp" entered once. Allocations: "data" 2400 bytes (300 doubles), once, deallocated
//   once; plus "Kokkos::Serial::scratch_mem" 11264 bytes allocated at the first parallel_reduce and
//   never reported as deallocated while the tool is loaded (Serial backend internals).
// No deep copies, fences, sections, events or dual views.
//
// OpenMP (OMPT) events:
//   parallel regions: 8 in all, each num_threads(2) (requested_team_size 2, team size 2):
//     6 inside "omp_inside_for" (2 calls x 3 iterations), 1 inside "omp_inside_reduce",
//     1 outside any Kokkos kernel (after the kernels, at top level, outside region "user_omp").
//   implicit tasks: 16 (2 per region), barrier_implicit_parallel 16,
//   work loop_static: 16 (each thread of each region: all loops are schedule(static)),
//   workshare barriers: 0 (every loop is a combined "parallel for").
//   Kokkos itself (Serial) opens no OpenMP region.

#include <Kokkos_Core.hpp>

#include <omp.h>

#include <cstdio>

namespace {

constexpr int N = 300;      // View "data": 300 doubles = 2400 bytes
constexpr int CHUNK = 100;  // each omp loop handles CHUNK elements

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  {
    Kokkos::Profiling::pushRegion("user_omp");
    Kokkos::View<double*, Kokkos::HostSpace> data("data", N);
    double* p = data.data();

    // Two launches of a 3-iteration kernel; each iteration opens one omp parallel region.
    for (int launch = 0; launch < 2; ++launch) {
      Kokkos::parallel_for(
          "omp_inside_for", Kokkos::RangePolicy<>(0, 3), [=](const int block) {
#pragma omp parallel for num_threads(2) schedule(static)
            for (int i = block * CHUNK; i < (block + 1) * CHUNK; ++i) p[i] += i % 100;
          });
    }

    // One iteration, one omp parallel region with a reduction.
    double red = 0.0;
    Kokkos::parallel_reduce(
        "omp_inside_reduce", Kokkos::RangePolicy<>(0, 1),
        [=](const int, double& acc) {
          double s = 0.0;
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : s)
          for (int i = 0; i < N; ++i) s += 50.0;
          acc += s;
        },
        red);

    double sum = 0.0;
    Kokkos::parallel_reduce(
        "check_sum", Kokkos::RangePolicy<>(0, N),
        [=](const int i, double& acc) { acc += p[i]; }, sum);
    Kokkos::Profiling::popRegion();

    std::printf("for kernel sum = %.0f\n", sum);
    std::printf("reduce kernel sum = %.0f\n", red);
  }

  // One omp parallel region outside any Kokkos kernel or region.
  long outside = 0;
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : outside)
  for (int i = 0; i < 100; ++i) outside += i;
  std::printf("outside sum = %ld\n", outside);

  Kokkos::finalize();
  std::printf("done\n");
  return 0;
}
