// mpi_kokkos - a Kokkos (OpenMP backend) + MPI program for the merge tests: every rank runs the
// same kernels, rank r with (r + 1) times the work in "scaled" (an imbalance across ranks that the
// merged summary must show), separated by collectives. Rank 0 prints one line; the output does not
// depend on the tool.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double total = 0;
  Kokkos::initialize(argc, argv);
  {
    const int n = 20000;
    Kokkos::View<double*> v("v", n);
    for (int step = 0; step < 3; ++step) {
      Kokkos::parallel_for("fill", n, KOKKOS_LAMBDA(int i) { v(i) = i * 0.5; });
      double local = 0;
      for (int k = 0; k <= rank; ++k) {
        double part = 0;
        Kokkos::parallel_reduce("scaled", n, KOKKOS_LAMBDA(int i, double& s) { s += v(i); }, part);
        local += part;
      }
      double sum = 0;
      MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      total += sum;
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  Kokkos::finalize();
  if (rank == 0) std::printf("ranks %d total %.1f\n", size, total);
  MPI_Finalize();
  return 0;
}
