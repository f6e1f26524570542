// A Kokkos program that ends with Kokkos spans still open: a profile section started and never
// stopped, two nested profile regions never popped, and, in some cases, a kernel and OpenMP state.
// Its spans still open end where the builder's OpenEnd ends them: at their thread's last event
// when the run is cut short (no clean end in the raw trace), else at the end of the run.
//
//   spans_left_open HOW
//   HOW: clean    Kokkos::finalize() and exit 0 with them open
//        abort    abort() between kernels (any backend)
//        kernel   abort() inside a kernel's body: the kernel open too. On the Serial backend the
//                 body runs on the calling thread, with no OpenMP region around it; on the OpenMP
//                 backend the kernel's parallel region and every thread's implicit task are open:
//                 each other thread first says it is in the kernel and then spins (no OpenMP
//                 event), so that what is open does not depend on timing.
//        barrier  (OpenMP backend) abort() inside a kernel's body on thread 0 after 0.3 s, the
//                 other threads done with their part: mostly waiting in the kernel's closing
//                 barrier, which depends on timing (the engines test compares, counts nothing).
//        omp      (built with OpenMP) abort() inside a plain `omp parallel` region outside any
//                 kernel, the other thread in it as in `kernel`; thread 0 first runs a Kokkos
//                 kernel inside it (serially: the region's table row says a kernel ran in it).
//        exit     as kernel, but exit(0) instead of abort(): a clean end with the kernel, its
//                 parallel region and the implicit tasks open.
//        omp_exit as omp, but exit(0) instead of abort().
//        omp_for  as omp, each thread inside the body of an `omp for` loop (its work construct
//                 open too) when thread 0 aborts.
//        omp_for_exit  as omp_for, but exit(0) instead of abort().
//        omp_task as omp, each thread inside the body of an explicit task it created (undeferred,
//                 `if(0)`: run at once by its creator) when thread 0 aborts.
//        omp_task_exit as omp_task, but exit(0) instead of abort().
//        omp_lock as omp, thread 0 holding an OpenMP lock that thread 1 asks for and waits on: the
//                 wait's event comes just after thread 1 says it is in (mostly before the abort,
//                 0.1 s later; the engines test compares, counts nothing).
//        omp_lock_exit as omp_lock, but exit(0) instead of abort().
//        omp_barrier as omp, thread 1 waiting in an explicit `omp barrier` (its events come just
//                 after it says it is in: the engines test compares, counts nothing).
//        omp_barrier_exit as omp_barrier, but exit(0) instead of abort().
// abort(): the sanitizers leave SIGABRT to the program (a SIGSEGV would be theirs). An aborted run
// first waits 1.2 s: the tool's writer thread writes a clock calibration point every second,
// without which kob takes the clock rate of the machine at the time it converts, and two
// conversions differ by a nanosecond.
#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {
#ifdef _OPENMP
std::atomic<int> others_in{0};
#endif

// On thread 0: waits (at most 60 s) until every other thread of the region said it is in (each
// once: it stays), then aborts (or exits, clean). On the others: says so and spins until the
// process ends.
void die_when_all_in(bool clean = false) {
#ifdef _OPENMP
  if (omp_get_thread_num() != 0) {
    others_in.fetch_add(1);
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int i = 0; i < 6000 && others_in.load() < omp_get_num_threads() - 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
#endif
  if (clean) std::exit(0);
  std::abort();
}

#ifdef _OPENMP
// omp_lock, omp_lock_exit.
void die_holding_a_lock(bool clean) {
  static omp_lock_t lock;
  omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
      omp_set_lock(&lock);
    }
#pragma omp barrier
    if (omp_get_thread_num() != 0) {
      others_in.fetch_add(1);
      omp_set_lock(&lock);  // never acquired
    }
    for (int i = 0; i < 6000 && others_in.load() < omp_get_num_threads() - 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (clean) std::exit(0);
    std::abort();
  }
}
#endif

#ifdef _OPENMP
// omp_barrier, omp_barrier_exit.
void die_in_a_barrier(bool clean) {
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
      for (int i = 0; i < 6000 && others_in.load() < omp_get_num_threads() - 1; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (clean) std::exit(0);
      std::abort();
    }
    others_in.fetch_add(1);
#pragma omp barrier
  }
}
#endif

bool on_thread_0() {
#ifdef _OPENMP
  return omp_get_thread_num() == 0;
#else
  return true;
#endif
}
}  // namespace

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
    if (std::strcmp(how, "exit") == 0) {
      std::printf("exiting inside a kernel\n");
      std::fflush(stdout);
      Kokkos::parallel_for("open_exits", 64 * Kokkos::DefaultExecutionSpace().concurrency(), KOKKOS_LAMBDA(int) { die_when_all_in(true); });
    }
#ifdef _OPENMP
    if (std::strcmp(how, "omp_for_exit") == 0) {
      std::printf("exiting inside an omp for loop\n");
      std::fflush(stdout);
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
#pragma omp for schedule(static, 1)
        for (int i = 0; i < 2; ++i) die_when_all_in(true);
      }
    }
    if (std::strcmp(how, "omp_task_exit") == 0) {
      std::printf("exiting inside an omp task\n");
      std::fflush(stdout);
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
#pragma omp task if (0)
        die_when_all_in(true);
      }
    }
    if (std::strcmp(how, "omp_barrier_exit") == 0) {
      std::printf("exiting with a thread in a barrier\n");
      std::fflush(stdout);
      die_in_a_barrier(true);
    }
    if (std::strcmp(how, "omp_lock_exit") == 0) {
      std::printf("exiting holding a lock\n");
      std::fflush(stdout);
      die_holding_a_lock(true);
    }
    if (std::strcmp(how, "omp_exit") == 0) {
      std::printf("exiting inside an omp region\n");
      std::fflush(stdout);
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
        die_when_all_in(true);
      }
    }
#endif
    if (std::strcmp(how, "clean") != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
      std::printf("aborting (%s)\n", how);
      std::fflush(stdout);
      // Iterations enough for every thread of the kernel's region to have some.
      const int n = 64 * Kokkos::DefaultExecutionSpace().concurrency();
      if (std::strcmp(how, "kernel") == 0) Kokkos::parallel_for("open_dies", n, KOKKOS_LAMBDA(int) { die_when_all_in(); });
      if (std::strcmp(how, "barrier") == 0)
        Kokkos::parallel_for("open_dies", n, KOKKOS_LAMBDA(int) {
          if (on_thread_0()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            std::abort();
          }
        });
#ifdef _OPENMP
      if (std::strcmp(how, "omp") == 0) {
#pragma omp parallel num_threads(2)
        {
          if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
          die_when_all_in();
        }
      }
      if (std::strcmp(how, "omp_task") == 0) {
#pragma omp parallel num_threads(2)
        {
          if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
#pragma omp task if (0)
          die_when_all_in();
        }
      }
      if (std::strcmp(how, "omp_lock") == 0) die_holding_a_lock(false);
      if (std::strcmp(how, "omp_barrier") == 0) die_in_a_barrier(false);
      if (std::strcmp(how, "omp_for") == 0) {
#pragma omp parallel num_threads(2)
        {
          if (omp_get_thread_num() == 0) Kokkos::parallel_for("open_in_omp", 4, KOKKOS_LAMBDA(int) {});
#pragma omp for schedule(static, 1)
          for (int i = 0; i < 2; ++i) die_when_all_in();
        }
      }
#endif
      std::abort();
    }
  }
  Kokkos::finalize();
  std::printf("ended with a section and two regions open\n");
  return 0;
}
