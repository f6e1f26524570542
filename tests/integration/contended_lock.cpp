// A plain OpenMP program whose threads each take one critical section N times (argv[1], default
// 2000): at nearly every moment some thread holds the lock or waits for it, so a trace can be cut
// into windows only while locks are held or waited for.
#include <cmath>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  double total = 0;
#pragma omp parallel
  for (int k = 0; k < n; ++k) {
#pragma omp critical(contended)
    for (int j = 0; j < 20; ++j) total += std::sqrt(double(j + k));
  }
  std::printf("contended_lock %d %.3f\n", n, total);
  return 0;
}
