// The OpenMP constructs the per-thread summary engine covers, each a few times with work that
// lasts (test_summary_engines.py compares its summary with the timeline builder's): worksharing
// loops that end in their implicit barrier (static and dynamic schedules, so dispatch events too),
// one with nowait, single, sections, masked, explicit barriers, a reduction, and regions of one
// thread. Plain OpenMP, no Kokkos; it prints a checksum so that no loop is optimised away.
//
//   engine_constructs [nested]
//   nested: nested parallel regions instead, each thread of a team of 2 opening a region of its
//           own, with 2 threads (omp_set_max_active_levels(2): teams of their own) and then with
//           nesting off (a team of one, on the same thread), each with an explicit barrier (the
//           outer ones too, before their inner region: a piece of the outer task first).
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

double spin(int n) {
  double x = 0;
  for (int i = 0; i < n; ++i) x += 1.0 / (1.0 + i);
  return x;
}

}  // namespace

double nested() {
  double total = 0;
  for (int active : {2, 1}) {
    omp_set_max_active_levels(active);
    // Rounds enough for several chunks a thread: epochs end inside nested regions.
    for (int round = 0; round < 400; ++round) {
#pragma omp parallel num_threads(2) reduction(+ : total)
      {
        total += spin(300);
#pragma omp barrier
#pragma omp parallel num_threads(2) reduction(+ : total)
        {
          total += spin(200 + 100 * omp_get_thread_num());
#pragma omp barrier
          total += spin(100);
        }
      }
    }
  }
  return total;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "nested") == 0) {
    std::printf("checksum %.3f\n", nested());
    return 0;
  }
  std::vector<double> v(4096, 1.0);
  double total = 0;
  for (int round = 0; round < 20; ++round) {
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (int i = 0; i < 4096; ++i) v[i] += spin(50 + (i % 7) * 20);
      // The loop's implicit barrier ends above: the code below needs every iteration done.
#pragma omp for schedule(dynamic, 64)
      for (int i = 0; i < 4096; ++i) v[i] *= 0.5;
#pragma omp for schedule(static) nowait
      for (int i = 0; i < 512; ++i) v[i] += 1.0;
#pragma omp single
      total += v[0];
#pragma omp sections
      {
#pragma omp section
        v[1] += spin(3000);
#pragma omp section
        v[2] += spin(1000);
      }
#pragma omp masked
      v[3] += spin(500);
#pragma omp barrier
    }
    double sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < 4096; ++i) sum += v[i];
    total += sum;
#pragma omp parallel num_threads(1)
    total += spin(200);
  }
  std::printf("checksum %.3f\n", total);
  return 0;
}
