// The C++ twin of source_lines.c for tests/integration/test_source_locations.py: OpenMP constructs at
// known lines in a member function of a namespaced class, in a function template instance and in a
// static function inlined into main, so that the reported function names are demangled ones
// (physics::Grid::step(int), double physics::weighted_sum<double>(double const*, int)). Each line is
// `L_... = __LINE__ + 1` just above its directive (for a lock, above the call), printed as
// `KOB_LINE <label> <file basename> <line>`. Run with OMP_NUM_THREADS=2.
#include <omp.h>

#include <cstdio>
#include <cstring>

namespace {

enum Label {
  PARALLEL, LOOP_STATIC, BARRIER, CRITICAL, LOCK, SINGLE, TASK, TEMPLATE_PARALLEL, INLINED_PARALLEL, LOCK_INIT,
  LOCK_DESTROY, LABELS
};
const char* const label_names[LABELS] = {"parallel",  "loop_static",       "barrier",          "critical",
                                         "lock",      "single",            "task",             "template_parallel",
                                         "inlined_parallel", "lock_init",  "lock_destroy"};
int label_lines[LABELS];

// Thread 0 writes each line (the same constant every time): no construct of its own.
void note(Label label, int line) {
  if (omp_get_thread_num() == 0) label_lines[label] = line;
}

}  // namespace

namespace physics {

class Grid {
 public:
  explicit Grid(omp_lock_t* lock) : lock_(lock) {}
  void step(int n);
  double total() const { return total_; }
  int task_runs() const { return task_runs_; }

 private:
  double cells_[512] = {};
  double total_ = 0;
  int task_runs_ = 0;
  omp_lock_t* lock_;
};

__attribute__((noinline)) void Grid::step(int n) {
  enum { L_PARALLEL = __LINE__ + 1 };
#pragma omp parallel
  {
    note(PARALLEL, L_PARALLEL);
    enum { L_FOR = __LINE__ + 1 };
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) cells_[i] += 0.25 * i;
    note(LOOP_STATIC, L_FOR);
    enum { L_BARRIER = __LINE__ + 1 };
#pragma omp barrier
    note(BARRIER, L_BARRIER);
    enum { L_CRITICAL = __LINE__ + 1 };
#pragma omp critical
    total_ += cells_[omp_get_thread_num()];
    note(CRITICAL, L_CRITICAL);
    enum { L_LOCK = __LINE__ + 1 };
    omp_set_lock(lock_);
    total_ += 1.0;
    omp_unset_lock(lock_);
    note(LOCK, L_LOCK);
    enum { L_SINGLE = __LINE__ + 1 };
#pragma omp single
    {
      enum { L_TASK = __LINE__ + 1 };
#pragma omp task
      task_runs_ += 1;
      label_lines[TASK] = L_TASK;  // one thread runs the single
    }
    note(SINGLE, L_SINGLE);
  }
}

template <class T>
__attribute__((noinline)) T weighted_sum(const T* values, int n) {
  T sum = 0;
  enum { L_TEMPLATE = __LINE__ + 1 };
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (int i = 0; i < n; ++i) {
    note(TEMPLATE_PARALLEL, L_TEMPLATE);
    sum += values[i] * i;
  }
  return sum;
}

}  // namespace physics

// Called once from main and inlined there at -O2: its parallel region is this function's line,
// inlined into main.
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

int main() {
  omp_lock_t lock;
  enum { L_INIT = __LINE__ + 1 };
  omp_init_lock(&lock);
  label_lines[LOCK_INIT] = L_INIT;
  physics::Grid grid(&lock);
  for (int call = 0; call < 3; ++call) grid.step(512);
  const double values[4] = {1, 2, 3, 4};
  const double weighted = physics::weighted_sum(values, 4);
  const int inlined = inlined_region(3);
  enum { L_DESTROY = __LINE__ + 1 };
  omp_destroy_lock(&lock);
  label_lines[LOCK_DESTROY] = L_DESTROY;
  const char* slash = std::strrchr(__FILE__, '/');
  for (int l = 0; l < LABELS; ++l)
    std::printf("KOB_LINE %s %s %d\n", label_names[l], slash ? slash + 1 : __FILE__, label_lines[l]);
  std::printf("source_lines_cpp done total=%.2f tasks=%d weighted=%.1f inlined=%d\n", grid.total(), grid.task_runs(),
              weighted, inlined);
  return 0;
}
