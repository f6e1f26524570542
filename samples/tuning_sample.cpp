// tuning_sample - a small Kokkos (OpenMP backend) + OpenMP program with four performance
// problems a Kokkos developer meets, each in a region of its own, for the findings and the HTML
// report: an imbalanced kernel (row i costs i: a static schedule leaves one thread most of the
// work), thousands of tiny kernels (OpenMP fork/join costs more than their work), a deep copy
// repeated every step (to the host and back), and a contended OpenMP critical section. Prints one
// checksum line that does not depend on the tool.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  double checksum = 0;
  {
    Kokkos::Profiling::pushRegion("assemble");
    const int rows = 1200;
    Kokkos::View<double*> row_sum("row_sum", rows);
    for (int rep = 0; rep < 3; ++rep)
      Kokkos::parallel_for("assemble_rows", rows, KOKKOS_LAMBDA(int i) {
        double s = 0;
        for (int j = 0; j < i * 20; ++j) s += std::sin(j * 1e-3);
        row_sum(i) = s;
      });
    Kokkos::Profiling::popRegion();

    Kokkos::Profiling::pushRegion("smooth");
    Kokkos::View<double*> small("small", 64);
    for (int k = 0; k < 10000; ++k) Kokkos::parallel_for("smooth_small", 64, KOKKOS_LAMBDA(int i) { small(i) = small(i) * 0.5 + 1; });
    Kokkos::Profiling::popRegion();

    Kokkos::Profiling::pushRegion("exchange");
    Kokkos::View<double*> field("field", 1 << 19);
    auto field_host = Kokkos::create_mirror(field);
    for (int step = 0; step < 100; ++step) {
      Kokkos::deep_copy(field_host, field);
      field_host(step) += 1;
      Kokkos::deep_copy(field, field_host);
    }
    Kokkos::Profiling::popRegion();

    Kokkos::Profiling::pushRegion("accumulate");
    double total = 0;
#pragma omp parallel
    for (int k = 0; k < 20000; ++k) {
#pragma omp critical(accumulate_total)
      for (int j = 0; j < 200; ++j) total += std::sqrt(double(j + k));
    }
    Kokkos::Profiling::popRegion();

    double rs = 0, ss = 0;
    Kokkos::parallel_reduce("sum_rows", rows, KOKKOS_LAMBDA(int i, double& s) { s += row_sum(i); }, rs);
    Kokkos::parallel_reduce("sum_small", 64, KOKKOS_LAMBDA(int i, double& s) { s += small(i); }, ss);
    checksum = rs + ss + field_host(7) + total;
  }
  Kokkos::finalize();
  std::printf("tuning_sample checksum %.6e\n", checksum);
  return 0;
}
