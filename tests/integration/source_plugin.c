// A library the test program (source_lines.c) dlopen()s after start and dlclose()s before it ends:
// its constructs must still resolve to this file's lines at conversion. Prints
// `KOB_LINE <label> <file basename> <line>` for its parallel region, its loop and its critical section.
#include <omp.h>
#include <stdio.h>
#include <string.h>

static double plugin_sum;

int plugin_run(int n) {
  int lines[3] = {0, 0, 0};
  enum { L_PARALLEL = __LINE__ + 1 };
#pragma omp parallel
  {
    double mine = 0;
    enum { L_LOOP = __LINE__ + 1 };
#pragma omp for schedule(static) nowait
    for (int i = 0; i < n; ++i) mine += 0.5 * i;
    enum { L_CRITICAL = __LINE__ + 1 };
#pragma omp critical
    plugin_sum += mine;
    if (omp_get_thread_num() == 0) {
      lines[0] = L_PARALLEL;
      lines[1] = L_LOOP;
      lines[2] = L_CRITICAL;
    }
  }
  const char* slash = strrchr(__FILE__, '/');
  const char* file = slash ? slash + 1 : __FILE__;
  printf("KOB_LINE plugin_parallel %s %d\n", file, lines[0]);
  printf("KOB_LINE plugin_loop %s %d\n", file, lines[1]);
  printf("KOB_LINE plugin_critical %s %d\n", file, lines[2]);
  return (int)plugin_sum;
}
