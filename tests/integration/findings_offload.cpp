// findings_offload - an OpenMP offload program (host offload, x86_64-pc-linux-gnu) whose target
// data transfers dominate: an 8 MiB array is updated to the device and back around a tiny target
// kernel, 60 times (the transfer_hotspot finding). stdout: "transfers done S".
#include <cstdio>
#include <vector>

int main() {
  const int n = 1 << 20;
  std::vector<double> a(n, 1.0);
  double* p = a.data();
#pragma omp target enter data map(to : p[0 : n])
  for (int step = 0; step < 60; ++step) {
#pragma omp target update to(p[0 : n])
#pragma omp target
    { p[step] += 1.0; }
#pragma omp target update from(p[0 : n])
  }
#pragma omp target exit data map(delete : p[0 : n])
  double s = 0;
  for (int i = 0; i < n; i += 4096) s += p[i];
  std::printf("transfers done %.0f\n", s);
  return 0;
}
