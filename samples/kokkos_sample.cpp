// kokkos_sample.cpp - a small Kokkos program that drives every Kokkos Tools hook of Kokkos 3.4.1.
//
// Builds against any host-only Kokkos 3.4.x (Serial or OpenMP default execution space); it names
// no backend explicitly. Run it with Kokkos::initialize(argc, argv), so --kokkos-tools-library=,
// --kokkos-tools-args= and KOKKOS_PROFILE_LIBRARY are honoured.
// Build (Debian's Serial Kokkos):
//   g++ -std=c++17 -O2 -isystem /usr/include/trilinos kokkos_sample.cpp -o kokkos_sample \
//       -ltrilinos_kokkoscore -ltrilinos_kokkoscontainers
// Build (OpenMP Kokkos installed under PREFIX):
//   clang++-22 -std=c++17 -O2 -fopenmp -isystem PREFIX/include kokkos_sample.cpp -o kokkos_sample \
//       PREFIX/lib/libkokkoscontainers.a PREFIX/lib/libkokkoscore.a -ldl
// (-std=c++20 works too; Kokkos 3.4.1 headers then warn unless included with -isystem.)
// The OpenMP backend prints an OMP_PROC_BIND warning on stderr unless OMP_PROC_BIND is set.
//
//   --no-finalize   do all the work, print the same lines, then std::exit(0) WITHOUT
//                   Kokkos::finalize() (every View is already destroyed at that point, so
//                   allocations/deallocations are the same as in a normal run; only the
//                   kokkosp_finalize_library hook is missing).
//   --repeat=N      the whole work N times (default 1; benchmarks/soak.py varies the run's length).
//   --crash-after=N end by SIGSEGV (a store to address 8) right after the Nth "iter" line: the
//                   crash of benchmarks/soak.py. Each "iter" line is flushed as it is printed,
//                   after its iteration's kernels and fence have ended.
//
// Everything below is deterministic (fixed sizes and loop counts, integer-valued data, so the
// reductions are exact whatever the thread count). Exact stdout (6 lines):
//
//   iter 0 dot = 311248
//   iter 1 dot = 524202
//   iter 2 dot = 737156
//   scan total = 1366
//   checksum = 57195
//   dual sum = 768
//
// HOOK CALLS with a tool loaded (verified with a logging tool on Kokkos 3.4.1, Debian's Serial
// build and an OpenMP build). K = concurrency of Kokkos::DefaultHostExecutionSpace: 1 for the
// Serial backend, OMP_NUM_THREADS for the OpenMP backend.
//
// Kernels (name: kind x calls, region path when it begins). devid of user kernels, of the
// ViewFill and of host_space_deepcopy = device_id(DefaultExecutionSpace) (0x0 Serial,
// 0x01000000 OpenMP); the "Kokkos::View::initialization [...]" kernels always report devid 0.
//   "Kokkos::View::initialization [x]"                        parallel_for    x1  "setup"
//   "Kokkos::View::initialization [y]"                        parallel_for    x1  "setup"
//   "Kokkos::View::initialization [counts]"                   parallel_for    x1  "setup"
//   "Kokkos::View::initialization [small_a]"                  parallel_for    x1  "setup"
//   "Kokkos::View::initialization [small_b]"                  parallel_for    x1  "setup"
//   "init_xy"                                                 parallel_for    x1  "setup"
//   "init_counts"                                             parallel_for    x1  "setup"
//   "Kokkos::ViewFill-1D"                                     parallel_for    x1  "setup"
//                                   (nested in the deep copy "small_a <- Scalar")
//   "local_update"                                            parallel_for    x3  "solve/assemble/local"
//   "assemble_dot"                                            parallel_reduce x3  "solve/assemble"
//   "prefix_sum"                                              parallel_scan   x1  ""
//   "13TripleFunctor" (no label: typeid(TripleFunctor).name()) parallel_for   x1  ""
//   "Kokkos::View::initialization [x_copy]"                   parallel_for    x1  ""
//   "Kokkos::Impl::host_space_deepcopy_double"                parallel_for    x1 if K > 1, else x0  ""
//                                   (nested in the deep copy "x_copy <- x")
//   "checksum"                                                parallel_reduce x1  ""
//   "Kokkos::View::initialization [DualView::modified_flags]" parallel_for    x1  ""
//   "Kokkos::View::initialization [dual]"                     parallel_for    x1  ""
//   "dual_fill"                                               parallel_for    x1  ""
//   "dual_sum"                                                parallel_reduce x1  ""
//   Totals: parallel_for 16 (17 if K > 1), parallel_reduce 5, parallel_scan 1.
//
// Regions (path: times entered): "setup" 1, "solve" 3, "solve/assemble" 3,
//   "solve/assemble/local" 3. push_profile_region = pop_profile_region = 10.
//
// Sections: "phase_A" and "phase_B", each created once and destroyed once (at the end of run()).
//   "phase_A": 2 start/stop intervals, "phase_B": 1 interval, overlapping:
//   start A, start B (after solve iteration 0), stop A (after iteration 1), stop B (after the loop),
//   then start A / stop A again around the DualView part. start = stop = 3.
//
// Profile events: "iteration_done" x3 (in region "solve"), "done" x1 (top level): 4 in all.
//
// Fences: "sample::solve_fence" x3 (one per solve iteration, in region "solve", devid as for user
//   kernels). Kokkos 3.4.1 itself never calls the fence hooks (not for Kokkos::fence(), not for
//   exec.fence(), not inside deep_copy), so the sample calls Kokkos::Tools::beginFence/endFence
//   (they exist in 3.4.1) around Kokkos::fence(). No other fence hook fires.
//
// Allocations (space "Host", label bytes), each allocated once and deallocated once:
//   x 131072, y 131072, counts 16384, small_a 8000, small_b 8000, x_copy 131072,
//   DualView::modified_flags 8, dual 4096  => 8 allocations, 429704 bytes; 8 deallocations.
// Backend-internal allocations (not deallocated while the tool is loaded):
//   Serial backend: "Kokkos::Serial::scratch_mem" 11264 bytes, once, inside the first
//     "assemble_dot" (region "solve/assemble"). So Serial: 9 allocate, 8 deallocate, Host peak
//     440968 bytes.
//   OpenMP backend: none (its thread scratch is allocated during Kokkos::initialize before the tool
//     is initialised and freed in finalize after it): 8 allocate, 8 deallocate, Host peak 429704.
//
// Deep copies (dst <- src, bytes), each once, all Host <- Host:
//   "small_a <- Scalar"  8000    (region "setup"; contains the ViewFill-1D kernel)
//   "small_b <- small_a" 8000    (region "")
//   "x_copy <- x"        131072  (region ""; >= 80 KiB: contains host_space_deepcopy_double when
//                                 K > 1, a plain memcpy without kernel when K == 1)
//   3 deep copies, 147072 bytes.
//
// DualView "dual" (Kokkos::DualView<double*>, 512 doubles): in a host-only Kokkos 3.4.1 build t_dev
//   and t_host have the same device type, so DualView::modify_*() returns before reporting and
//   sync_*() finds nothing to copy: Kokkos itself fires NO dual_view hook and no deep copy. The
//   sample then reports what a two-space DualView would, with explicit
//   Kokkos::Tools::modifyDualView/syncDualView calls (only when the DualView is single-device):
//     modify "dual" on_device=1, sync "dual" to_device=0, modify "dual" on_device=0,
//     sync "dual" to_device=1  => 2 modify, 2 sync (inside the 2nd interval of "phase_A").
//
// OpenMP backend only (OMPT view, verified with a counting OMPT tool, libomp 19): every Kokkos
//   kernel above is exactly one omp parallel region with team size K (requested K, flags
//   0x80000002), K implicit tasks: 22 regions inside kernels (23 if K > 1). Kokkos::initialize
//   opens 3 regions before init_library and Kokkos::finalize 2 after finalize_library (none with
//   --no-finalize): 27 parallel regions in all for K == 1, 28 for K > 1. No omp region outside a
//   kernel between init_library and finalize_library.
//
// Other hooks: init_library x1 (version 20210225), parse_args x1 (argv[0] + the blank-split
//   --kokkos-tools-args, so argc = 1 without them), declare_metadata once per Kokkos configuration
//   key, finalize_library x1 (x0 with --no-finalize).

#include <Kokkos_Core.hpp>
#include <Kokkos_DualView.hpp>
#include <Kokkos_Profiling_ProfileSection.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace {

constexpr int N_LARGE = 16384;  // doubles: 131072 bytes (>= 80 KiB)
constexpr int N_SMALL = 1000;   // doubles: 8000 bytes
constexpr int N_SCAN = 4096;    // ints: 16384 bytes
constexpr int N_DUAL = 512;     // doubles: 4096 bytes
constexpr int ITERS = 3;
int g_crash_after = 0;  // --crash-after=N; 0: never
int g_iter_lines = 0;

// A real fault, not raise(): the crash handler must see what a crashing program gives it.
void crash() {
  volatile int* p = reinterpret_cast<volatile int*>(std::strtoul("8", nullptr, 10));
  *p = 1;
}

}  // namespace

// Launched without a label: Kokkos names the kernel typeid(TripleFunctor).name(), which is
// "13TripleFunctor" with the Itanium ABI (g++ and clang++). Kept at global scope on purpose.
struct TripleFunctor {
  Kokkos::View<double*> v;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { v(i) = 3.0 * v(i); }
};

namespace {

uint32_t default_devid() {
  return Kokkos::Tools::Experimental::device_id(Kokkos::DefaultExecutionSpace());
}

// Kokkos 3.4.1 never calls the fence hooks itself: report the fence explicitly.
void named_fence(const char* name) {
  uint64_t handle = 0;
  Kokkos::Tools::beginFence(name, default_devid(), &handle);
  Kokkos::fence();
  Kokkos::Tools::endFence(handle);
}

void run() {
  using Kokkos::parallel_for;
  using Kokkos::parallel_reduce;
  using Kokkos::parallel_scan;
  using Kokkos::View;

  // ---- setup: 5 views (5 allocations, 5 initialization kernels), 2 kernels, 1 scalar fill ----
  Kokkos::Profiling::pushRegion("setup");
  View<double*> x("x", N_LARGE);
  View<double*> y("y", N_LARGE);
  View<int*> counts("counts", N_SCAN);
  View<double*> small_a("small_a", N_SMALL);
  View<double*> small_b("small_b", N_SMALL);
  parallel_for(
      "init_xy", N_LARGE, KOKKOS_LAMBDA(const int i) {
        x(i) = static_cast<double>(i % 7);
        y(i) = static_cast<double>(i % 5);
      });
  parallel_for(
      "init_counts", N_SCAN, KOKKOS_LAMBDA(const int i) { counts(i) = (i % 3 == 0) ? 1 : 0; });
  Kokkos::deep_copy(small_a, 2.0);  // deep copy "small_a <- Scalar" with a ViewFill kernel
  Kokkos::Profiling::popRegion();

  // ---- two overlapping sections ----
  Kokkos::Profiling::ProfilingSection sec_a("phase_A");
  Kokkos::Profiling::ProfilingSection sec_b("phase_B");
  sec_a.start();

  // ---- solve > assemble > local, three times ----
  for (int it = 0; it < ITERS; ++it) {
    Kokkos::Profiling::pushRegion("solve");
    Kokkos::Profiling::pushRegion("assemble");
    Kokkos::Profiling::pushRegion("local");
    parallel_for(
        "local_update", N_LARGE, KOKKOS_LAMBDA(const int i) { y(i) = y(i) + x(i); });
    Kokkos::Profiling::popRegion();  // local
    double dot = 0.0;
    parallel_reduce(
        "assemble_dot", N_LARGE,
        KOKKOS_LAMBDA(const int i, double& sum) { sum += x(i) * y(i); }, dot);
    Kokkos::Profiling::popRegion();  // assemble
    Kokkos::Profiling::markEvent("iteration_done");
    named_fence("sample::solve_fence");
    Kokkos::Profiling::popRegion();  // solve
    std::printf("iter %d dot = %.0f\n", it, dot);
    std::fflush(stdout);
    if (++g_iter_lines == g_crash_after) crash();

    if (it == 0) sec_b.start();  // A and B now both open
    if (it == 1) sec_a.stop();   // A closes while B is still open
  }
  sec_b.stop();

  // ---- scan, an unlabeled kernel, deep copies (top level: region "") ----
  int total = 0;
  parallel_scan(
      "prefix_sum", N_SCAN,
      KOKKOS_LAMBDA(const int i, int& update, const bool final) {
        const int c = counts(i);
        if (final) counts(i) = update;  // exclusive prefix sum
        update += c;
      },
      total);
  // counts(i) now holds the number of multiples of 3 below i; total = 1366.
  parallel_for(Kokkos::RangePolicy<>(0, N_SMALL), TripleFunctor{small_a});  // small_a = 6.0
  Kokkos::deep_copy(small_b, small_a);                                      // 8000 bytes
  View<double*> x_copy("x_copy", N_LARGE);
  Kokkos::deep_copy(x_copy, x);  // 131072 bytes: the parallel host copy path when K > 1
  double checksum = 0.0;
  parallel_reduce(
      "checksum", N_LARGE,
      KOKKOS_LAMBDA(const int i, double& sum) {
        sum += x_copy(i) + (i < N_SMALL ? small_b(i) : 0.0) + (i < N_SCAN ? counts(i) % 2 : 0);
      },
      checksum);
  std::printf("scan total = %d\n", total);
  std::printf("checksum = %.0f\n", checksum);

  // ---- DualView (second interval of section A) ----
  sec_a.start();
  {
    using dual_t = Kokkos::DualView<double*>;
    constexpr bool single_device =
        std::is_same<typename dual_t::t_dev::device_type,
                     typename dual_t::t_host::device_type>::value;
    dual_t dual("dual", N_DUAL);
    auto d = dual.d_view;
    parallel_for(
        "dual_fill", N_DUAL, KOKKOS_LAMBDA(const int i) { d(i) = static_cast<double>(i % 4); });
    dual.modify_device();
    if (single_device)
      Kokkos::Tools::modifyDualView(dual.d_view.label(), dual.d_view.data(), true);
    dual.sync_host();
    if (single_device)
      Kokkos::Tools::syncDualView(dual.h_view.label(), dual.h_view.data(), false);
    auto h = dual.h_view;
    double dsum = 0.0;
    parallel_reduce(
        "dual_sum", N_DUAL, KOKKOS_LAMBDA(const int i, double& s) { s += h(i); }, dsum);
    dual.modify_host();
    if (single_device)
      Kokkos::Tools::modifyDualView(dual.h_view.label(), dual.h_view.data(), false);
    dual.sync_device();
    if (single_device)
      Kokkos::Tools::syncDualView(dual.d_view.label(), dual.d_view.data(), true);
    std::printf("dual sum = %.0f\n", dsum);
  }
  sec_a.stop();
  Kokkos::Profiling::markEvent("done");
}

}  // namespace

int main(int argc, char* argv[]) {
  bool no_finalize = false;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-finalize") == 0) no_finalize = true;
    if (std::strncmp(argv[i], "--repeat=", 9) == 0) repeat = std::atoi(argv[i] + 9);
    if (std::strncmp(argv[i], "--crash-after=", 14) == 0) g_crash_after = std::atoi(argv[i] + 14);
  }

  Kokkos::initialize(argc, argv);
  for (int r = 0; r < repeat; ++r) run();  // every View and section is destroyed when run() returns
  std::fflush(stdout);
  if (no_finalize) std::exit(0);
  Kokkos::finalize();
  return 0;
}
