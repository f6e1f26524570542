// A Kokkos program that ends with Kokkos spans still open: a profile section started and never
// stopped, two nested profile regions never popped, and, on the Serial backend, a kernel. Its
// spans still open end where the builder's OpenEnd ends them: at their thread's last event when
// the run is cut short (no clean end in the raw trace), else at the end of the run.
//
//   spans_left_open HOW
//   HOW: clean    Kokkos::finalize() and exit 0 with them open
//        abort    abort() between kernels (any backend)
//        kernel   abort() inside a kernel's body (the Serial backend runs the body on the calling
//                 thread, with no OpenMP region open around it): the kernel open too
// abort(): the sanitizers leave SIGABRT to the program (a SIGSEGV would be theirs). An aborted run
// first waits 1.2 s: the tool's writer thread writes a clock calibration point every second,
// without which kob takes the clock rate of the machine at the time it converts, and two
// conversions differ by a nanosecond.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "clean";
  Kokkos::initialize(argc, argv);
  {
    Kokkos::View<long*> v("open_view", 100);
    Kokkos::parallel_for("open_before", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) = i; });
    Kokkos::fence();
    std::uint32_t section = 0;
    Kokkos::Profiling::createProfileSection("open_section", &section);
    Kokkos::Profiling::startSection(section);
    Kokkos::Profiling::pushRegion("open_outer");
    Kokkos::Profiling::pushRegion("open_inner");
    for (int k = 0; k < 3; ++k) Kokkos::parallel_for("open_inside", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) += i; });
    Kokkos::fence();
    if (std::strcmp(how, "clean") != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
      std::printf("aborting %s\n", std::strcmp(how, "kernel") == 0 ? "in a kernel" : "between kernels");
      std::fflush(stdout);
      if (std::strcmp(how, "kernel") == 0) Kokkos::parallel_for("open_dies", 1, KOKKOS_LAMBDA(int) { std::abort(); });
      std::abort();
    }
  }
  Kokkos::finalize();
  std::printf("ended with a section and two regions open\n");
  return 0;
}
