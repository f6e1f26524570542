// OpenMP constructs at known lines, for tests/integration/test_source_locations.py: every construct
// the test checks has `enum { L_... = __LINE__ + 1 };` just above its directive (for a lock, above
// the omp_set_lock call), and the program prints `KOB_LINE <label> <file basename> <line>` for each.
// Built several ways (PIE, non-PIE, -g0, stripped, and once more with KOB_REBUILT=1, whose code is
// longer so that its addresses differ). With a path argument it also dlopen()s that library
// (source_plugin.c), runs its constructs and dlclose()s it before the last parallel region.
// Run with OMP_NUM_THREADS=2: the counts the test expects are per team of 2.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#ifndef KOB_REBUILT
#define KOB_REBUILT 0
#endif

enum { kCalls = 3 };  // compute_step runs this many times

enum Label {
  PARALLEL, LOOP_STATIC, BARRIER, CRITICAL, LOCK, SINGLE, TASK, INLINED_PARALLEL, AFTER_PLUGIN, LOCK_INIT, LOCK_DESTROY,
  LABELS
};
static const char* const label_names[LABELS] = {"parallel", "loop_static",      "barrier",      "critical",
                                                "lock",     "single",           "task",         "inlined_parallel",
                                                "after_plugin", "lock_init",    "lock_destroy"};
static int label_lines[LABELS];

static double data[512];
static double total;
static int task_runs;
static omp_lock_t lock;

static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Thread 0 writes each line (the same constant every time): no construct of its own.
static void note(enum Label label, int line) {
  if (omp_get_thread_num() == 0) label_lines[label] = line;
}

__attribute__((noinline)) void compute_step(int n) {
#if KOB_REBUILT
  // Only here to move the code below to other addresses.
  for (int i = 0; i < n; ++i) data[i] = data[i] * 0.5 + (double)i / (i + 3.0);
#endif
  enum { L_PARALLEL = __LINE__ + 1 };
#pragma omp parallel
  {
    note(PARALLEL, L_PARALLEL);
    enum { L_FOR = __LINE__ + 1 };
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) data[i] += 0.25 * i;
    note(LOOP_STATIC, L_FOR);
    enum { L_BARRIER = __LINE__ + 1 };
#pragma omp barrier
    note(BARRIER, L_BARRIER);
    enum { L_CRITICAL = __LINE__ + 1 };
#pragma omp critical
    total += data[omp_get_thread_num()];
    note(CRITICAL, L_CRITICAL);
    enum { L_LOCK = __LINE__ + 1 };
    omp_set_lock(&lock);
    total += 1.0;
    omp_unset_lock(&lock);
    note(LOCK, L_LOCK);
    enum { L_SINGLE = __LINE__ + 1 };
#pragma omp single
    {
      enum { L_TASK = __LINE__ + 1 };
#pragma omp task
      task_runs += 1;
      label_lines[TASK] = L_TASK;  // one thread runs the single
    }
    note(SINGLE, L_SINGLE);
  }
}

// Called once from main and inlined there at -O2 (static, one caller): its parallel region's
// location is this function's line, inlined into main.
static int inlined_region(int k) {
  int sum = 0;
  enum { L_INLINED = __LINE__ + 1 };
#pragma omp parallel reduction(+ : sum)
  {
    note(INLINED_PARALLEL, L_INLINED);
    sum += k;
  }
  return sum;
}

// Runs after the plugin was dlclose()d.
__attribute__((noinline)) int after_plugin(void) {
  int threads = 0;
  enum { L_AFTER = __LINE__ + 1 };
#pragma omp parallel reduction(+ : threads)
  {
    note(AFTER_PLUGIN, L_AFTER);
    threads += 1;
  }
  return threads;
}

static int run_plugin(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "source_lines: dlopen %s: %s\n", path, dlerror());
    return -1;
  }
  int (*plugin_run)(int) = (int (*)(int))dlsym(handle, "plugin_run");
  const int result = plugin_run ? plugin_run(64) : -1;
  dlclose(handle);
  return result;
}

int main(int argc, char** argv) {
  enum { L_INIT = __LINE__ + 1 };
  omp_init_lock(&lock);
  label_lines[LOCK_INIT] = L_INIT;
  for (int call = 0; call < kCalls; ++call) compute_step(512);
  const int inlined = inlined_region(3);
  const int plugin = argc > 1 ? run_plugin(argv[1]) : 0;
  const int threads = after_plugin();
  enum { L_DESTROY = __LINE__ + 1 };
  omp_destroy_lock(&lock);
  label_lines[LOCK_DESTROY] = L_DESTROY;
  for (int l = 0; l < LABELS; ++l) printf("KOB_LINE %s %s %d\n", label_names[l], base_name(__FILE__), label_lines[l]);
  printf("source_lines done total=%.2f tasks=%d inlined=%d plugin=%d threads=%d\n", total, task_runs, inlined, plugin,
         threads);
  return plugin < 0 ? 1 : 0;
}
