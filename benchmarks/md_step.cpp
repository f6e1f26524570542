// md_step.cpp - a run shaped like a molecular-dynamics proxy's time steps on the OpenMP-backend
// Kokkos: per step a force kernel (the big one), two integration kernels, an energy and a virial
// reduction, and a user OpenMP parallel region outside any kernel (a thermostat); every 10 steps a
// neighbour-list rebuild kernel and a second plain OpenMP region (bookkeeping). About 6 kernels per
// step of very different sizes, ~10 k kernels/s on 2 threads here: the whole-run overhead
// benchmark (benchmarks/stream_bench.py --only md) times the process, start and exit included.
//
// Usage: md_step [Kokkos options] [STEPS [ATOMS]]   (default 3000 steps of 40000 atoms). Prints the
// checksum and nothing else.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  {
    long steps = 3000, atoms = 40000;
    int found = 0;
    for (int i = 1; i < argc; ++i) {
      if (argv[i][0] == '-') continue;
      (found++ == 0 ? steps : atoms) = std::strtol(argv[i], nullptr, 10);
    }
    constexpr int kNeighbours = 16;
    Kokkos::View<double*> x("x", atoms), v("v", atoms), f("f", atoms);
    Kokkos::View<int**> neigh("neigh", atoms, kNeighbours);
    Kokkos::parallel_for("init", atoms, KOKKOS_LAMBDA(const int i) {
      x(i) = 1.1 * i;
      v(i) = 1e-3 * ((i * 7919) % 13 - 6);
    });
    double energy = 0, virial = 0, scale = 1.0;
    for (long step = 0; step < steps; ++step) {
      if (step % 10 == 0) {
        Kokkos::parallel_for("neighbor_build", atoms, KOKKOS_LAMBDA(const int i) {
          for (int k = 0; k < kNeighbours; ++k) neigh(i, k) = int((i + k * 37 + 1) % atoms);
        });
        long stale = 0;
#pragma omp parallel reduction(+ : stale)
        {
#pragma omp single
          stale += step / 10;  // bookkeeping on one thread
        }
        energy += 1e-12 * double(stale);
      }
      Kokkos::parallel_for("force", atoms, KOKKOS_LAMBDA(const int i) {
        double fi = 0;
        for (int k = 0; k < kNeighbours; ++k) {
          const double d = x(neigh(i, k)) - x(i);
          const double r2 = d * d + 1.0;
          const double inv6 = 1.0 / (r2 * r2 * r2);
          fi += d * inv6 * (inv6 - 0.5) / r2;
        }
        f(i) = fi;
      });
      Kokkos::parallel_for("integrate_v", atoms, KOKKOS_LAMBDA(const int i) { v(i) += 1e-4 * f(i); });
      Kokkos::parallel_for("integrate_x", atoms, KOKKOS_LAMBDA(const int i) { x(i) += 1e-4 * v(i); });
      double ke = 0, vir = 0;
      Kokkos::parallel_reduce("kinetic_energy", atoms, KOKKOS_LAMBDA(const int i, double& s) { s += 0.5 * v(i) * v(i); }, ke);
      Kokkos::parallel_reduce("virial", atoms, KOKKOS_LAMBDA(const int i, double& s) { s += x(i) * f(i); }, vir);
      energy += ke;
      virial += vir;
      // The thermostat: user OpenMP outside any kernel, on the view's host data.
      scale = ke > 0 ? std::sqrt(1.0 / (1.0 + ke)) : 1.0;
      double* vp = v.data();
#pragma omp parallel for
      for (long i = 0; i < atoms; ++i) vp[i] *= 0.5 * (1.0 + scale);
    }
    std::printf("checksum %.6e %.6e\n", energy, virial);
  }
  Kokkos::finalize();
  return 0;
}
