// A Kokkos (OpenMP backend) program with one performance problem per case, each strong enough
// that its finding (src/common/analysis/findings.hpp) is the first whatever the machine's load:
//
//   findings_cases imbalanced     kernel "imbalanced_kernel" x5, one iteration per thread, the
//                                 first 20x the others' work (static schedule)
//   findings_cases tiny_kernels   kernel "tiny_kernel" x5000 over 2 iterations of nothing
//   findings_cases deep_copies    deep_copy(dst, src) of 8 MiB x50 in a loop
//   findings_cases locks          a plain omp parallel region: 2000 critical sections per thread
//   findings_cases alloc_loop     View "tmp" of 32 MiB allocated (and so zeroed) x30 in a loop
//   findings_cases nested         kernel "nested_kernel" x5 launched by one thread of a plain omp
//                                 parallel region of 2: Kokkos runs it serially
//   findings_cases flood          kernel "flood_kernel" x100000 over 2 iterations (a run too long
//                                 for a small --max-trace-size: the incomplete_data finding)
//   findings_cases fences         fence "wait_for_device" x50, each around 2 ms of waiting (what a
//                                 fence does while a device finishes; Kokkos 3.4.1 never calls the
//                                 fence hooks itself, so the program reports them, as
//                                 samples/kokkos_sample does), beside 50 small kernels
//   findings_cases balanced       kernel "balanced_kernel" x20 over 1M even iterations
//                                 (dynamic schedule, so a busy machine does not unbalance it)
//
// stdout: "CASE done S" (S: a checksum, so that no work is optimised away). Exit 2 on a bad case.
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdint>
#include <thread>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

// Work that the compiler can neither drop nor shorten: `n` rounds of a mixing recurrence; the
// result is a small integer-valued double, so sums stay exact.
KOKKOS_INLINE_FUNCTION double spin(long n, double x) {
  std::uint64_t h = static_cast<std::uint64_t>(x) + 1;
  for (long k = 0; k < n; ++k) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    h ^= h >> 29;
  }
  return double(h & 7);
}

double imbalanced() {
  const int threads = Kokkos::DefaultHostExecutionSpace::concurrency();
  Kokkos::View<double*> out("out", threads);
  for (int call = 0; call < 5; ++call)
    Kokkos::parallel_for("imbalanced_kernel", Kokkos::RangePolicy<Kokkos::Schedule<Kokkos::Static>>(0, threads),
                         KOKKOS_LAMBDA(int i) { out(i) += spin(i == 0 ? 20'000'000 : 1'000'000, 1.0); });
  double s = 0;
  for (int i = 0; i < threads; ++i) s += out(i);
  return s;
}

double tiny_kernels() {
  Kokkos::View<double*> v("v", 2);
  for (int call = 0; call < 5000; ++call) Kokkos::parallel_for("tiny_kernel", 2, KOKKOS_LAMBDA(int i) { v(i) += 1; });
  return v(0) + v(1);
}

double deep_copies() {
  const int n = 1 << 20;
  Kokkos::View<double*> src("src", n), dst("dst", n);
  Kokkos::parallel_for("fill_src", n, KOKKOS_LAMBDA(int i) { src(i) = i % 7; });
  double s = 0;
  for (int k = 0; k < 50; ++k) {
    Kokkos::deep_copy(dst, src);
    s += dst(k);
  }
  return s;
}

double locks() {
  double shared = 0;
#pragma omp parallel
  {
    for (int k = 0; k < 2000; ++k) {
#pragma omp critical
      shared += spin(20'000, shared);
    }
  }
  return shared;
}

double alloc_loop() {
  const int n = 1 << 22;
  double s = 0;
  for (int k = 0; k < 30; ++k) {
    Kokkos::View<double*> tmp("tmp", n);  // zero-filled by Kokkos' initialization kernel each time
    tmp(k) = k;
    s += tmp(k);
  }
  return s;
}

double nested() {
  const int n = 1 << 16;
  Kokkos::View<double*> a("a", n);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0)
      for (int call = 0; call < 5; ++call)
        Kokkos::parallel_for("nested_kernel", n, KOKKOS_LAMBDA(int i) { a(i) += spin(200, a(i) + i % 5); });
  }
  double s = 0;
  for (int i = 0; i < n; i += 1024) s += a(i);
  return s;
}

double flood() {
  Kokkos::View<double*> a("a", 2);
  for (int call = 0; call < 100000; ++call) Kokkos::parallel_for("flood_kernel", 2, KOKKOS_LAMBDA(int i) { a(i) += 1; });
  return a(0);
}

double fences() {
  Kokkos::View<double*> a("a", 1024);
  for (int step = 0; step < 50; ++step) {
    Kokkos::parallel_for("fenced_step", 1024, KOKKOS_LAMBDA(int i) { a(i) += i; });
    std::uint64_t id = 0;
    Kokkos::Tools::beginFence("wait_for_device", Kokkos::Tools::Experimental::device_id(Kokkos::DefaultExecutionSpace()), &id);
    Kokkos::fence();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Kokkos::Tools::endFence(id);
  }
  return a(7);
}

double balanced() {
  const int n = 1 << 20;
  Kokkos::View<double*> a("a", n);
  for (int call = 0; call < 20; ++call)
    Kokkos::parallel_for("balanced_kernel", Kokkos::RangePolicy<Kokkos::Schedule<Kokkos::Dynamic>>(0, n),
                         KOKKOS_LAMBDA(int i) { a(i) = spin(20, a(i) + i % 5); });
  double s = 0;
  Kokkos::parallel_reduce("balanced_sum", n, KOKKOS_LAMBDA(int i, double& acc) { acc += a(i); }, s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  int rc = 0;
  Kokkos::initialize(argc, argv);
  {
    double s = 0;
    if (which == "imbalanced") s = imbalanced();
    else if (which == "tiny_kernels") s = tiny_kernels();
    else if (which == "deep_copies") s = deep_copies();
    else if (which == "locks") s = locks();
    else if (which == "alloc_loop") s = alloc_loop();
    else if (which == "nested") s = nested();
    else if (which == "fences") s = fences();
    else if (which == "flood") s = flood();
    else if (which == "balanced") s = balanced();
    else rc = 2;
    if (rc == 0) std::printf("%s done %.0f\n", which.c_str(), std::floor(s));
    else std::fprintf(stderr, "findings_cases: unknown case '%s' (imbalanced, tiny_kernels, deep_copies, locks, alloc_loop, nested, fences, flood, balanced)\n", which.c_str());
  }
  Kokkos::finalize();
  return rc;
}
