// A Kokkos (OpenMP backend) program whose profile regions have empty names, nested in each other
// and in named ones, each around a kernel: the summary joins region paths as the timeline builder
// does ("" inside "" is the path "", "a" / "" / "b" is "a//b"), so that a row's path and depth do
// not depend on which engine made it (test_summary_engines.py).
//   region_names [ROUNDS]   ROUNDS times (default 3): "" > "" > "x", then "a" > "" > "b"
// stdout: "region_names done S" (S: a checksum, so that no work is optimised away).
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>

namespace {

double kernel(const char* name, Kokkos::View<double*> a) {
  Kokkos::parallel_for(name, a.extent(0), KOKKOS_LAMBDA(int i) { a(i) += 0.5 * i; });
  double s = 0;
  Kokkos::parallel_reduce(name, a.extent(0), KOKKOS_LAMBDA(int i, double& acc) { acc += a(i); }, s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  double s = 0;
  Kokkos::initialize(argc, argv);
  {
    Kokkos::View<double*> a("a", 1000);
    for (int r = 0; r < rounds; ++r) {
      Kokkos::Profiling::pushRegion("");
      Kokkos::Profiling::pushRegion("");
      Kokkos::Profiling::pushRegion("x");
      s += kernel("in_x", a);
      Kokkos::Profiling::popRegion();
      s += kernel("in_empty", a);
      Kokkos::Profiling::popRegion();
      Kokkos::Profiling::popRegion();
      Kokkos::Profiling::pushRegion("a");
      Kokkos::Profiling::pushRegion("");
      Kokkos::Profiling::pushRegion("b");
      s += kernel("in_b", a);
      Kokkos::Profiling::popRegion();
      Kokkos::Profiling::popRegion();
      Kokkos::Profiling::popRegion();
    }
  }
  Kokkos::finalize();
  std::printf("region_names done %.0f\n", s);
  return 0;
}
