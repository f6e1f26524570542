// openmp_offload_sample.cpp - a plain OpenMP offload program (no Kokkos) with a known set of OMPT
// target events. Offloads to the host (libomptarget's x86_64 plugin); no GPU involved.
// Build (-fopenmp-targets=... at compile AND at link time):
//   clang++-22 -std=c++20 -O2 -fopenmp=libomp -fopenmp-targets=x86_64-pc-linux-gnu \
//       samples/openmp_offload_sample.cpp -o openmp_offload_sample
// Run with KMP_WARNINGS=0: otherwise libomp may warn "Cannot form a team with 4 threads" on stderr.
//
// Four parts, all on the main thread, arrays of fixed sizes (global, so every map is by address):
//   T1 `target teams distribute parallel for num_teams(4)` with map(to: x) 8000 bytes,
//      map(from: y) 4000 bytes, map(tofrom: z) 1000 bytes;
//   T2 `target data map(tofrom: d)` 2400 bytes around a `target map(tofrom: d)` (d is present);
//   T3 `target enter data map(to: e) map(alloc: f)` (800 / 400 bytes), `target update to(e)`, a
//      `target` using e and f, `target update from(f)`, `target exit data map(release: e)
//      map(delete: f)`;
//   T4 omp_target_alloc 512 bytes, omp_target_memcpy host -> device, a `target is_device_ptr`,
//      omp_target_memcpy device -> host, omp_target_free (the routines outside any target region).
// Deterministic (integer arithmetic); exact stdout (5 lines):
//
//   map: y sum = 4500, z sum = 62250
//   target data: d sum = 45150
//   enter/exit data: f sum = 600
//   device memory: buf sum = 6048
//   done
//
// OMPT TARGET EVENTS (EMI callbacks; libomp 19.1.7 + libomptarget 22, host offload; verified with a
// logging OMPT tool: the whole ordered sequence, bytes and device numbers included, is identical
// over 5 runs each with OMP_NUM_THREADS=1, 2 and 4, at -O0 and -O2/-O3, via OMP_TOOL_LIBRARIES and
// via LD_PRELOAD). Nothing below depends on the thread count.
// Devices: device_initialize x4 (devices 0..3, type "generic-64bit", before main), device_load x1
//   (device 0, file name NULL, just before T1 begins; its size field is the image size: do not
//   assert), device_finalize x4 (0..3, at exit). No device tracing.
// Device numbers: every target region has device_num 0 (omp_get_default_device()). In data ops
//   the host is 4 (omp_get_initial_device()): alloc and transfer_to_device src 4 -> dest 0,
//   transfer_from_device src 0 -> dest 4, delete src 0, dest -1. Every delete reports 0 bytes.
//
// Target regions: 10 (begin = end), in this order; none nests in another:
//   T1 target             alloc 4000 (y), alloc 8000 (x), transfer_to_device 8000 (x),
//                         alloc 1000 (z), transfer_to_device 1000 (z), submit (requested_teams 4),
//                         transfer_from_device 1000 (z), transfer_from_device 4000 (y),
//                         delete (z), delete (x), delete (y)                   -> 11 data ops
//   T2 `target data` is NOT one region: it is reported as a target_enter_data region at its start
//      and a target_exit_data region at its end, with the inner target region between them:
//      target_enter_data  alloc 2400, transfer_to_device 2400
//      target             no data op (d is present), submit (requested_teams 1)
//      target_exit_data   transfer_from_device 2400, delete
//   T3 target_enter_data  alloc 800 (e), transfer_to_device 800 (e), alloc 400 (f; no transfer)
//      target_update      transfer_to_device 800 (e)
//      target             no data op (e and f present), submit (requested_teams 1)
//      target_update      transfer_from_device 400 (f)
//      target_exit_data   delete (e), delete (f) (no transfer)
//   T4 (outside any target region: target_data is NOT NULL but its value is 0/unset)
//                         alloc 512 (omp_target_alloc), transfer_to_device 512 (memcpy 4 -> 0)
//      target             no data op (is_device_ptr), submit (requested_teams 1)
//                         (outside) transfer_from_device 512 (memcpy 0 -> 4),
//                         delete (omp_target_free)
//   By kind: target 4, target_enter_data 2, target_exit_data 2, target_update 2.
// Submits: 4, one per `target` region; requested_teams 4, 1, 1, 1.
// Data ops (begins = ends; bytes summed over begins):
//   alloc                 7 ops  17112 bytes  (6 in target regions + omp_target_alloc)
//   transfer_to_device    6 ops  13512 bytes  (5 in target regions + 1 omp_target_memcpy)
//   transfer_from_device  5 ops   8312 bytes  (4 in target regions + 1 omp_target_memcpy)
//   delete                7 ops      0 bytes  (6 in target regions + omp_target_free)
//   => 25 data ops, 21 in target regions (T1 11, T2 4, T3 6), 4 outside (T4).
// Host-side OpenMP events (not target events): T1 runs a league parallel region (flags 0x40000002)
//   plus its team regions on host threads (5 parallel_begin seen); the plain `target` regions run
//   on the encountering thread with no parallel region. Runtime-specific: do not assert.

#include <omp.h>

#include <cstdio>
#include <cstring>

namespace {

constexpr int NX = 1000;  // double x[NX]: 8000 bytes, map(to)
constexpr int NY = 500;   // double y[NY]: 4000 bytes, map(from)
constexpr int NZ = 250;   // int z[NZ]:    1000 bytes, map(tofrom)
constexpr int ND = 300;   // long d[ND]:   2400 bytes, target data map(tofrom)
constexpr int NE = 200;   // int e[NE]:     800 bytes, target enter data map(to)
constexpr int NF = 100;   // int f[NF]:     400 bytes, target enter data map(alloc)
constexpr int NB = 64;    // long buf[NB]:  512 bytes, omp_target_alloc / omp_target_memcpy

double x[NX], y[NY];
int z[NZ];
long d[ND];
int e[NE], f[NF];
long hbuf[NB];

}  // namespace

int main() {
  const int dev = omp_get_default_device();
  const int host = omp_get_initial_device();

  // T1: one target region with map(to), map(from), map(tofrom).
  for (int i = 0; i < NX; ++i) x[i] = i % 10;
  for (int i = 0; i < NZ; ++i) z[i] = i;
#pragma omp target teams distribute parallel for num_teams(4) map(to : x[0 : NX]) \
    map(from : y[0 : NY]) map(tofrom : z[0 : NZ])
  for (int i = 0; i < NY; ++i) {
    y[i] = x[i] + x[i + NY];
    if (i < NZ) z[i] = 2 * z[i];
  }
  double ysum = 0;
  long zsum = 0;
  for (int i = 0; i < NY; ++i) ysum += y[i];
  for (int i = 0; i < NZ; ++i) zsum += z[i];
  std::printf("map: y sum = %.0f, z sum = %ld\n", ysum, zsum);

  // T2: target data region with a target region inside (d is present: no new mapping inside).
  for (int i = 0; i < ND; ++i) d[i] = i;
#pragma omp target data map(tofrom : d[0 : ND])
  {
#pragma omp target map(tofrom : d[0 : ND])
    for (int i = 0; i < ND; ++i) d[i] += 1;
  }
  long dsum = 0;
  for (int i = 0; i < ND; ++i) dsum += d[i];
  std::printf("target data: d sum = %ld\n", dsum);

  // T3: unstructured mapping with updates.
  for (int i = 0; i < NE; ++i) e[i] = 1;
  for (int i = 0; i < NF; ++i) f[i] = -1;
#pragma omp target enter data map(to : e[0 : NE]) map(alloc : f[0 : NF])
  for (int i = 0; i < NE; ++i) e[i] = 3;
#pragma omp target update to(e[0 : NE])
#pragma omp target
  for (int i = 0; i < NF; ++i) f[i] = e[i] + e[i + NF];
#pragma omp target update from(f[0 : NF])
  long fsum = 0;
  for (int i = 0; i < NF; ++i) fsum += f[i];
#pragma omp target exit data map(release : e[0 : NE]) map(delete : f[0 : NF])
  std::printf("enter/exit data: f sum = %ld\n", fsum);

  // T4: device memory routines, outside any target region.
  for (int i = 0; i < NB; ++i) hbuf[i] = i;
  long* dbuf = static_cast<long*>(omp_target_alloc(sizeof hbuf, dev));
  omp_target_memcpy(dbuf, hbuf, sizeof hbuf, 0, 0, dev, host);
#pragma omp target is_device_ptr(dbuf)
  for (int i = 0; i < NB; ++i) dbuf[i] *= 3;
  std::memset(hbuf, 0, sizeof hbuf);
  omp_target_memcpy(hbuf, dbuf, sizeof hbuf, 0, 0, host, dev);
  omp_target_free(dbuf, dev);
  long bsum = 0;
  for (int i = 0; i < NB; ++i) bsum += hbuf[i];
  std::printf("device memory: buf sum = %ld\n", bsum);
  std::printf("done\n");
  return 0;
}
