// One kernel name run on two execution spaces: "shared_name" 3 times on OpenMP and 2 times on
// Serial (a parallel_for each), and "openmp_only" once. Prints one line that does not depend on
// the tool.
#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  long sum = 0;
  {
    constexpr int kN = 1000;
    Kokkos::View<long*, Kokkos::HostSpace> v("v", kN);
    for (int r = 0; r < 3; ++r)
      Kokkos::parallel_for("shared_name", Kokkos::RangePolicy<Kokkos::OpenMP>(0, kN), [=](int i) { v(i) += i; });
    for (int r = 0; r < 2; ++r)
      Kokkos::parallel_for("shared_name", Kokkos::RangePolicy<Kokkos::Serial>(0, kN), [=](int i) { v(i) += 1; });
    Kokkos::parallel_for("openmp_only", Kokkos::RangePolicy<Kokkos::OpenMP>(0, kN), [=](int i) { v(i) *= 2; });
    Kokkos::fence();
    for (int i = 0; i < kN; ++i) sum += v(i);
  }
  Kokkos::finalize();
  std::printf("two_spaces sum %ld\n", sum);
  return 0;
}
