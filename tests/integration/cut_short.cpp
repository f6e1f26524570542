// A Kokkos program that aborts with Kokkos spans still open: a run cut short, whose raw trace has
// no clean end, so that its spans still open end at their thread's last event. abort(): the
// sanitizers leave SIGABRT to the program (a SIGSEGV would be theirs). It first waits 1.2 s: the
// tool's writer thread writes a clock calibration point every second, without which kob takes the
// clock rate of the machine at the time it converts, and two conversions differ by a nanosecond.
//
//   cut_short WHERE
//   WHERE: regions  two nested profile regions open, between kernels (any backend)
//          kernel   also a kernel: abort() inside its body (the Serial backend runs the body on the
//                   calling thread, with no OpenMP region open around it)
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  const bool in_kernel = argc > 1 && std::strcmp(argv[1], "kernel") == 0;
  Kokkos::initialize(argc, argv);
  Kokkos::View<long*> v("cut_view", 100);
  Kokkos::parallel_for("cut_before", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) = i; });
  Kokkos::fence();
  Kokkos::Profiling::pushRegion("cut_outer");
  Kokkos::Profiling::pushRegion("cut_inner");
  for (int k = 0; k < 3; ++k) Kokkos::parallel_for("cut_inside", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) += i; });
  Kokkos::fence();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  std::printf("aborting %s\n", in_kernel ? "in a kernel" : "between kernels");
  std::fflush(stdout);
  if (in_kernel) Kokkos::parallel_for("cut_dies", 1, KOKKOS_LAMBDA(int) { std::abort(); });
  std::abort();
}
