// diff_program [FACTOR | rename] - a Kokkos (OpenMP backend) program for the kob diff test: each of
// 8 steps runs, inside the region "step", the kernels "steady" (little work, the same every run:
// whatever the machine's load does to it stays under 1% of the run time) and "changing", which
// does FACTOR times its work per call (the same calls, each FACTOR times as long), or is named
// "renamed" with "rename". It prints one checksum line that does not depend on the tool.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  const bool rename = argc > 1 && std::strcmp(argv[1], "rename") == 0;
  const int factor = argc > 1 && !rename ? std::atoi(argv[1]) : 1;
  const std::string changing = rename ? "renamed" : "changing";
  Kokkos::initialize(argc, argv);
  double sum = 0;
  {
    constexpr int kSteps = 8, kN = 1 << 15, kSteadyReps = 2, kReps = 200;
    Kokkos::View<double*> v("v", kN), w("w", kN);
    const int changing_reps = kReps * factor;
    for (int step = 0; step < kSteps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      // A chain of dependent multiply-adds per element: the time follows the repetitions.
      Kokkos::parallel_for("steady", kN, KOKKOS_LAMBDA(int i) {
        double x = v(i) + i;
        for (int k = 0; k < kSteadyReps; ++k) x = x * 0.999 + 1.0;
        v(i) = x;
      });
      Kokkos::parallel_for(changing, kN, KOKKOS_LAMBDA(int i) {
        double x = w(i) + i;
        for (int k = 0; k < changing_reps; ++k) x = x * 0.999 + 1.0;
        w(i) = x;
      });
      Kokkos::Profiling::popRegion();
    }
    // On the host (the views are in HostSpace): no third kernel.
    for (int i = 0; i < kN; ++i) sum += v(i) > 0 && w(i) > 0 ? 1 : 0;
  }
  Kokkos::finalize();
  std::printf("diff_program factor %d positive %.0f\n", factor, sum);
  return 0;
}
