// openmp_rules.cpp - plain OpenMP (no Kokkos), one performance problem per case, each at a line the
// program prints, for the OpenMP findings that need what a region holds (docs/findings.md):
//   small_reduction   20000 `parallel for reduction(+:acc)` regions over 16 iterations: the loop is
//                     a fraction of each region, the rest is fork, join, dispatch and the combine
//                     -> fork_join_overhead at the parallel for's line
//   tiny_tasks        one `single` thread creates 100000 tasks of a few hundred ns each
//                     -> task_granularity at the task's line (and, if the region is reported as
//                     imbalanced, advice about creating tasks, not about a loop schedule)
//   nested            an `omp parallel` inside another while nesting is off: every inner region
//                     gets a team of 1 -> serialized_region at the inner directive's line
//   one_thread        `omp parallel num_threads(1)` around real work -> serialized_region
//   balanced          even loops with enough work per region -> no finding at all
// Usage: openmp_rules CASE. stdout: `KOB_LINE <label> openmp_rules.cpp <line>` for the case's
// directive, then "<case> done S" (S: a checksum, so that no work is optimised away).
// Build: clang++-22 -std=c++20 -O2 -g -fopenmp samples/openmp_rules.cpp -o openmp_rules
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
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

const char* file_name() {
  const char* slash = std::strrchr(__FILE__, '/');
  return slash ? slash + 1 : __FILE__;
}

void print_line(const char* label, int line) { std::printf("KOB_LINE %s %s %d\n", label, file_name(), line); }

__attribute__((noinline)) double small_reduction() {
  double total = 0;
  for (int r = 0; r < 20000; ++r) {
    double acc = 0;
    enum { L = __LINE__ + 1 };
#pragma omp parallel for reduction(+ : acc)
    for (int i = 0; i < 16; ++i) acc += spin(2, i);
    total += acc;
    if (r == 0) print_line("small_reduction", L);
  }
  return total;
}

__attribute__((noinline)) double tiny_tasks() {
  std::vector<double> out(100000);
#pragma omp parallel
#pragma omp single
  {
    for (int k = 0; k < 100000; ++k) {
      enum { L = __LINE__ + 1 };
#pragma omp task firstprivate(k) shared(out)
      out[k] = spin(40, k);
      if (k == 0) print_line("tiny_tasks", L);
    }
  }
  double s = 0;
  for (double v : out) s += v;
  return s;
}

__attribute__((noinline)) double nested() {
  std::vector<double> per(64);
#pragma omp parallel
  {
    const int outer = omp_get_thread_num();
    for (int r = 0; r < 50; ++r) {
      enum { L = __LINE__ + 1 };
#pragma omp parallel
      per[outer * 8 + omp_get_thread_num()] += spin(100000, r);
      if (outer == 0 && r == 0) print_line("nested", L);
    }
  }
  double s = 0;
  for (double v : per) s += v;
  return s;
}

__attribute__((noinline)) double one_thread() {
  double s = 0;
  for (int r = 0; r < 50; ++r) {
    enum { L = __LINE__ + 1 };
#pragma omp parallel num_threads(1) reduction(+ : s)
    s += spin(200000, r);
    if (r == 0) print_line("one_thread", L);
  }
  return s;
}

__attribute__((noinline)) double balanced() {
  std::vector<double> out(4096);
  for (int r = 0; r < 20; ++r) {
    enum { L = __LINE__ + 1 };
#pragma omp parallel for schedule(static)
    for (int i = 0; i < 4096; ++i) out[i] += spin(2000, i);
    if (r == 0) print_line("balanced", L);
  }
  double s = 0;
  for (double v : out) s += v;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  double s = 0;
  if (which == "small_reduction") {
    s = small_reduction();
  } else if (which == "tiny_tasks") {
    s = tiny_tasks();
  } else if (which == "nested") {
    s = nested();
  } else if (which == "one_thread") {
    s = one_thread();
  } else if (which == "balanced") {
    s = balanced();
  } else {
    std::fprintf(stderr, "usage: openmp_rules small_reduction|tiny_tasks|nested|one_thread|balanced\n");
    return 2;
  }
  std::printf("%s done %.0f\n", which.c_str(), s);
  return 0;
}
