// openmp_constructs.cpp - plain OpenMP (no Kokkos) with three performance problems, each at a known
// line, for the OpenMP findings (load_imbalance, fork_join_overhead, lock_contention) and the
// summary's per-location table (summary.json openmp.constructs):
//   imbalanced_loop      `parallel for schedule(static)` x3 whose iteration i costs ~i^2: with a
//                        static schedule the last thread gets most of the work
//   tiny_regions         10000 `parallel` regions around almost no work: forking and joining the
//                        team costs more than the work
//   contended_critical   every thread takes one `critical` section 2000 times, working inside it
// Build: clang++-22 -std=c++20 -O2 -g -fopenmp samples/openmp_constructs.cpp -o openmp_constructs
// (-g: the findings and tables name file:line; without it they name function+offset).
// stdout: `KOB_LINE <label> openmp_constructs.cpp <line>` per problem (the directive's line), then
// "openmp_constructs done S" (S: a checksum, so that no work is optimised away). About 0.1 s.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Work that the compiler can neither drop nor shorten: `n` rounds of a mixing recurrence; the
// result is a small integer-valued double, so sums stay exact.
double spin(long n, double x) {
  std::uint64_t h = static_cast<std::uint64_t>(x) + 1;
  for (long k = 0; k < n; ++k) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    h ^= h >> 29;
  }
  return double(h & 7);
}

struct Lines {
  int imbalanced = 0, tiny = 0, critical = 0;
} lines;

__attribute__((noinline)) double imbalanced_loop(int calls) {
  const int n = 128;
  std::vector<double> out(n);
  for (int call = 0; call < calls; ++call) {
    enum { L_LOOP = __LINE__ + 1 };
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) out[i] += spin(long(i) * i * 40, i);
    lines.imbalanced = L_LOOP;
  }
  double s = 0;
  for (double v : out) s += v;
  return s;
}

__attribute__((noinline)) double tiny_regions(int regions) {
  std::vector<double> per_thread(omp_get_max_threads() + 1);
  for (int r = 0; r < regions; ++r) {
    enum { L_TINY = __LINE__ + 1 };
#pragma omp parallel
    per_thread[omp_get_thread_num()] += 1;
    lines.tiny = L_TINY;
  }
  double s = 0;
  for (double v : per_thread) s += v;
  return s;
}

__attribute__((noinline)) double contended_critical(int per_thread) {
  double shared = 0;
#pragma omp parallel
  {
    for (int k = 0; k < per_thread; ++k) {
      enum { L_CRITICAL = __LINE__ + 1 };
#pragma omp critical
      shared += spin(4000, shared);
      if (k == 0 && omp_get_thread_num() == 0) lines.critical = L_CRITICAL;
    }
  }
  return shared;
}

}  // namespace

int main() {
  const double s = imbalanced_loop(3) + tiny_regions(10000) + contended_critical(2000);
  const char* slash = std::strrchr(__FILE__, '/');
  const char* file = slash ? slash + 1 : __FILE__;
  std::printf("KOB_LINE imbalanced_loop %s %d\n", file, lines.imbalanced);
  std::printf("KOB_LINE tiny_regions %s %d\n", file, lines.tiny);
  std::printf("KOB_LINE contended_critical %s %d\n", file, lines.critical);
  std::printf("openmp_constructs done %.0f\n", s);
  return 0;
}
