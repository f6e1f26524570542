// archer_race.cpp - one data race at a known line, for LLVM's race detector archer run beside
// kokkos-ompt-bridge (test_archer.py). Built with -fsanitize=thread -fopenmp. Besides the race it
// hands values between threads only through OpenMP's own synchronisation (a single's barrier, an
// explicit barrier, task dependences, a taskwait), which ThreadSanitizer sees only through
// archer's OMPT callbacks: without them it reports those as races too.
// stdout: "race at line N" (the racy line), then "handed 41 sum 41".
#include <cstdio>

int main() {
  int handed = 0, racy = 0, sum = 0, race_line = 0;
#pragma omp parallel num_threads(2) shared(handed, racy, sum, race_line)
  {
#pragma omp single
    handed = 41;
    const int seen = handed;  // after the single's barrier
#pragma omp barrier
#pragma omp masked
    {
      int t = 0;
#pragma omp task depend(out : t) shared(t)
      t = seen;
#pragma omp task depend(in : t) shared(t, sum)
      sum = t;
#pragma omp taskwait
      race_line = __LINE__ + 3;
    }
#pragma omp barrier
    racy++;  // the race: both threads, no synchronisation
  }
  std::printf("race at line %d\nhanded %d sum %d\n", race_line, handed, sum);
  return racy > 0 ? 0 : 1;
}
