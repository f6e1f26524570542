// kokkos_target_sample.cpp - a small Kokkos program for the OpenMPTarget backend (Kokkos 3.4.1)
// with a known set of Kokkos Tools hooks and OMPT target events. Offloads to the host (the
// x86_64 plugin of libomptarget); no GPU involved.
//
// Build (OpenMPTarget Kokkos installed under PREFIX, e.g. build/deps/kokkos-openmptarget made by
// scripts/setup.sh; -fopenmp-targets=... is needed at compile AND at link time):
//   clang++-22 -std=c++17 -O2 -fopenmp=libomp -fopenmp-targets=x86_64-pc-linux-gnu \
//       -isystem PREFIX/include kokkos_target_sample.cpp -o kokkos_target_sample \
//       PREFIX/lib/libkokkoscontainers.a PREFIX/lib/libkokkoscore.a -ldl \
//       -fopenmp=libomp -fopenmp-targets=x86_64-pc-linux-gnu
// Run with KMP_WARNINGS=0: otherwise libomp warns "Cannot form a team with 512 threads" on stderr.
// Kokkos::initialize(argc, argv): --kokkos-tools-library=, --kokkos-tools-args= and
// KOKKOS_PROFILE_LIBRARY are honoured.
//
// What it does: device views "a" (4096 doubles, 32768 bytes) and "b" (2048 doubles, 16384 bytes)
// in OpenMPTargetSpace, host mirrors "a_mirror"/"b_mirror" (create_mirror_view), filled on the
// host; region "offload" = deep_copy a <- a_mirror, b <- b_mirror, kernels "axpy", "dot", "scale";
// then device view "c" (4096 doubles), deep_copy c <- a (device to device), b_mirror <- b,
// a_mirror <- c. Deterministic (integer-valued data, exact reduction); exact stdout (4 lines):
//
//   dot = 65439
//   sum b = 16369
//   sum c = 36855
//   done
//
// KOKKOS HOOKS (verified with a logging Kokkos tool, Kokkos 3.4.1 OpenMPTarget build):
// Kernels, in order (name, kind, devid, region path when it begins):
//   "Kokkos::View::initialization [a]"         parallel_for    0x0         ""
//   "Kokkos::View::initialization [b]"         parallel_for    0x0         ""
//   "Kokkos::View::initialization [a_mirror]"  parallel_for    0x0         ""  (host, no OMPT)
//   "Kokkos::View::initialization [b_mirror]"  parallel_for    0x0         ""  (host, no OMPT)
//   "axpy"                                     parallel_for    0x04000000  "offload"
//   "dot"                                      parallel_reduce 0x04000000  "offload"
//   "scale"                                    parallel_for    0x04000000  "offload"
//   "Kokkos::View::initialization [c]"         parallel_for    0x0         ""
//   Totals: parallel_for 7, parallel_reduce 1, parallel_scan 0. (The device views' initialization
//   kernels run on the device but report devid 0, as every View::initialization does in 3.4.1.)
// Regions: "offload" once (push 1, pop 1); it holds the first 2 deep copies and axpy, dot, scale.
// Deep copies (dst space "dst" <- src space "src", bytes), each once, in this order:
//   OpenMPTargetSpace "a" <- Host "a_mirror"               32768  (region "offload")
//   OpenMPTargetSpace "b" <- Host "b_mirror"               16384  (region "offload")
//   OpenMPTargetSpace "c" <- OpenMPTargetSpace "a"         32768  (region "")
//   Host "b_mirror" <- OpenMPTargetSpace "b"               16384  (region "")
//   Host "a_mirror" <- OpenMPTargetSpace "c"               32768  (region "")
//   5 deep copies, 131072 bytes.
// Allocations: only the host mirrors: allocate "a_mirror" 32768 and "b_mirror" 16384 in space
//   "Host" (2, 49152 bytes); deallocate "b_mirror" then "a_mirror" at the end of run(). The device
//   views a, b, c report NO allocate/deallocate hook on this backend: their memory is visible only
//   as OMPT data ops (below).
// No fence, section, profile event or DualView hook. init_library x1, finalize_library x1.
//
// OMPT TARGET EVENTS (EMI callbacks; libomp 19.1.7 + libomptarget 22, host offload; verified with a
// logging OMPT tool: the whole ordered event sequence, bytes and device numbers included, is
// identical over 5 runs each with OMP_NUM_THREADS=1, 2 and 4, at -O0, -O2 and -O3).
// Devices: device_initialize x4 (devices 0..3, type "generic-64bit", before init_library),
//   device_load x1 (device 0, file name NULL, before the first data op; its size field is the
//   image size: do not assert), device_finalize x4 (0..3, after finalize_library). No tracing.
// Device numbers: every target region has device_num 0 (omp_get_default_device()). In data ops
//   the host is 4 (omp_get_initial_device()): alloc and transfer_to_device src 4 -> dest 0,
//   transfer_from_device src 0 -> dest 4, delete src 0, dest -1.
// Target regions: 6, all kind ompt_target (`target`), device 0, all on the main thread, each
//   entirely inside one Kokkos kernel (one region per device kernel), each with 1 submit:
//   kernel                                data ops inside, in order                   submit teams
//   View::initialization [a], [b], [c]    alloc 56, transfer_to_device 56, delete     0
//   axpy                                  alloc 48, transfer_to_device 48, delete     0
//   dot                                   alloc 48, transfer_to_device 48, alloc 8,   512
//                                         transfer_to_device 8, (submit),
//                                         transfer_from_device 8, delete, delete
//   scale                                 alloc 24, transfer_to_device 24, delete     0
//   (the functor is mapped `to`: 24 bytes per captured View with clang++-22; the reduction
//   result, 8 bytes, tofrom). 22 data ops inside target regions.
// Submits: 6; requested_teams 0 x5, 512 x1 ("dot": Kokkos' reduce uses num_teams(512)).
// Data ops outside any target region (target_data is NOT NULL but its value is 0/unset),
//   all on the main thread, in program order:
//   - construction of device view a / b / c, before its initialization kernel, outside every
//     Kokkos hook: alloc 32896 / 16512 / 32896 (omp_target_alloc of the data plus the 128-byte
//     SharedAllocationHeader), then transfer_to_device 128 (the header).
//   - label reads (View::label() copies the header back): transfer_from_device 128, outside every
//     Kokkos hook: 1 after each device view's initialization kernel (3), 1 per create_mirror_view
//     (2), and ONLY WHEN A KOKKOS TOOL IS LOADED (for the deep-copy hook arguments) 1 per
//     device-side view of each deep copy, just before its begin_deep_copy (6: a; b; c and a; b; c).
//   - inside the deep-copy hooks (omp_target_memcpy; no target region):
//       a <- a_mirror   transfer_to_device 32768 (4 -> 0)
//       b <- b_mirror   transfer_to_device 16384 (4 -> 0)
//       c <- a          TWO ops, staged through the host: transfer_from_device 32768 (0 -> 4),
//                       then transfer_to_device 32768 (4 -> 0)
//       b_mirror <- b   transfer_from_device 16384 (0 -> 4)
//       a_mirror <- c   transfer_from_device 32768 (0 -> 4)
//     6 data ops in 5 deep copies.
//   - destruction of the device views (omp_target_free): delete, 0 bytes, x3: "c" right after the
//     last deep copy, then "b" and "a" after the mirrors' deallocate hooks.
// Totals (begins = ends; bytes summed over begins) with a Kokkos tool loaded:
//   alloc                 10 ops  82600 bytes  (7 in target regions)
//   transfer_to_device    13 ops  82600 bytes  (7 in target regions)
//   transfer_from_device  15 ops  83336 bytes  (1 in a target region)
//   delete                10 ops      0 bytes  (every delete reports 0 bytes; 7 in target regions)
//   => 48 data ops: 22 in kernels, 6 in deep copies, 20 outside every Kokkos hook.
// With the OMPT tool alone (no Kokkos tool): transfer_from_device 9 ops 82568 bytes (no deep-copy
//   label reads), everything else the same: 42 data ops, 14 outside the (unreported) hooks.
// Host-side OpenMP events (not target events): each submit runs a league parallel region (flags
//   0x40000002) and team regions on host threads: 20 parallel_begin (6 of them leagues) seen, and
//   22 implicit tasks with OMP_NUM_THREADS=1 but 27 with 2 or 4 on a 2-core machine: they depend on
//   thread and core counts: do not assert.

#include <Kokkos_Core.hpp>

#include <cstdio>

namespace {

constexpr int NA = 4096;  // doubles: 32768 bytes ("a", "c")
constexpr int NB = 2048;  // doubles: 16384 bytes ("b")

void run() {
  using Kokkos::View;
  // Device views (default memory space = OpenMPTargetSpace) and their host mirrors.
  View<double*> a("a", NA);
  View<double*> b("b", NB);
  auto ha = Kokkos::create_mirror_view(a);
  auto hb = Kokkos::create_mirror_view(b);
  for (int i = 0; i < NA; ++i) ha(i) = static_cast<double>(i % 7);
  for (int i = 0; i < NB; ++i) hb(i) = static_cast<double>(i % 5);

  Kokkos::Profiling::pushRegion("offload");
  Kokkos::deep_copy(a, ha);  // host -> device, 32768 bytes
  Kokkos::deep_copy(b, hb);  // host -> device, 16384 bytes
  Kokkos::parallel_for(
      "axpy", NB, KOKKOS_LAMBDA(const int i) { b(i) = 2.0 * a(i) + b(i); });
  double dot = 0.0;
  Kokkos::parallel_reduce(
      "dot", NB, KOKKOS_LAMBDA(const int i, double& s) { s += a(i) * b(i); }, dot);
  Kokkos::parallel_for(
      "scale", NA, KOKKOS_LAMBDA(const int i) { a(i) = 3.0 * a(i); });
  Kokkos::Profiling::popRegion();

  View<double*> c("c", NA);
  Kokkos::deep_copy(c, a);   // device -> device, 32768 bytes
  Kokkos::deep_copy(hb, b);  // device -> host, 16384 bytes
  Kokkos::deep_copy(ha, c);  // device -> host, 32768 bytes
  double sb = 0.0, sc = 0.0;
  for (int i = 0; i < NB; ++i) sb += hb(i);
  for (int i = 0; i < NA; ++i) sc += ha(i);
  std::printf("dot = %.0f\n", dot);
  std::printf("sum b = %.0f\n", sb);
  std::printf("sum c = %.0f\n", sc);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  run();  // every View is destroyed when run() returns
  Kokkos::finalize();
  std::printf("done\n");
  return 0;
}
