// thread_per_job JOBS - a program that starts a std::thread per job, one after another (each
// joins before the next starts), as job runners do. Each job runs one OpenMP parallel region of
// 2 threads, so each job thread is an OpenMP initial thread that libomp ends when the thread ends.
// Prints the sum of all jobs' results (deterministic); exit 0.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

static long job(int k) {
  long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
    for (int i = omp_get_thread_num(); i < 1000; i += omp_get_num_threads()) sum += i * (k % 7);
  }
  return sum;
}

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 300;
  long total = 0;
  for (int k = 0; k < jobs; ++k) {
    long r = 0;
    std::thread([&r, k] { r = job(k); }).join();
    total += r;
  }
  std::printf("jobs %d total %ld\n", jobs, total);
  return 0;
}
