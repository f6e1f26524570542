// diff_program - a Kokkos (OpenMP backend) program for the kob diff test: each of STEPS steps runs,
// inside the region "step", the kernels "steady" (the same work every run) and "changing", whose
// work per call is doubled when the first argument is "double" (the same calls, each twice as
// long). It prints one checksum line that does not depend on the tool.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  const int factor = argc > 1 && std::strcmp(argv[1], "double") == 0 ? 2 : 1;
  Kokkos::initialize(argc, argv);
  double sum = 0;
  {
    constexpr int kSteps = 8, kN = 1 << 15, kReps = 200;
    Kokkos::View<double*> v("v", kN), w("w", kN);
    const int changing_reps = kReps * factor;
    for (int step = 0; step < kSteps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      // A chain of dependent multiply-adds per element: the time follows the repetitions.
      Kokkos::parallel_for("steady", kN, KOKKOS_LAMBDA(int i) {
        double x = v(i) + i;
        for (int k = 0; k < kReps; ++k) x = x * 0.999 + 1.0;
        v(i) = x;
      });
      Kokkos::parallel_for("changing", kN, KOKKOS_LAMBDA(int i) {
        double x = w(i) + i;
        for (int k = 0; k < changing_reps; ++k) x = x * 0.999 + 1.0;
        w(i) = x;
      });
      Kokkos::Profiling::popRegion();
    }
    // On the host (the views are in HostSpace): no third kernel whose tiny time would only add noise.
    for (int i = 0; i < kN; ++i) sum += v(i) > 0 && w(i) > 0 ? 1 : 0;
  }
  Kokkos::finalize();
  std::printf("diff_program factor %d positive %.0f\n", factor, sum);
  return 0;
}
