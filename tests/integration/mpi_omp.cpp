// mpi_omp - an MPI program whose ranks do different OpenMP work, so that each rank's files can be
// told apart by their contents: rank r opens r + 1 parallel regions. Rank 0 prints the number of
// ranks and a sum over all of them (deterministic for a given OMP_NUM_THREADS).
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long sum = 0;
  for (int k = 0; k <= rank; ++k) {
#pragma omp parallel reduction(+ : sum)
    sum += k + 1;
  }
  long total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("ranks %d total %ld\n", size, total);
  MPI_Finalize();
  return 0;
}
