// openmp_edge_cases.cpp - OpenMP constructs whose OMPT event sequences are legal but unusual: one
// case per run, named by the first argument. Plain OpenMP (no Kokkos), LLVM's runtime.
// Build: clang++-22 -std=c++20 -O2 -fopenmp=libomp samples/openmp_edge_cases.cpp -o openmp_edge_cases
//
// Each case prints one line "<case>: ..." with values that do not depend on timing, and exits 0.
// The short sleeps only make the spans visible in a viewer; no result depends on them.
//
//   lock_across      a team of 2: thread 0 sets a lock and a nest lock in one masked block, both
//                    threads meet an explicit barrier, thread 0 unsets both in a second masked
//                    block. 1 lock hold and 1 nest_lock hold, each spanning the barrier.
//   test_lock        on one thread: a held lock and nest lock (held by a second thread of a team
//                    of 2) are tried with omp_test_lock / omp_test_nest_lock: 2 failed tries
//                    (mutex_acquire with no mutex_acquired) and, after the release, 2 successful
//                    tries (holds).
//   detach_early     a detached task fulfils its own event, then runs on: the task completes
//                    when its body ends (early fulfill).
//   detach_late      a detached task's body ends first; its creator fulfils the event after
//                    that (late fulfill): the task completes at the fulfill.
//   taskwait_depend  a task depend(out:x), a `taskwait depend(in:x)` and a `task if(0)
//                    depend(inout:x)`: 2 explicit tasks, both complete; the taskwait-depend
//                    construct is reported by libomp as a task of its own that ends with
//                    ompt_taskwait_complete.
//   cancel_taskgroup (needs OMP_CANCELLATION=true) in a taskgroup, task A cancels the taskgroup;
//                    then 6 more tasks are created: all 6 are discarded without running their
//                    body; 7 explicit tasks in all.
//   untied           untied tasks in a team of 1 (serialized): each runs at once on the
//                    encountering thread; 4 untied tasks, each with a taskyield inside.
//   error_warning    `#pragma omp error at(execution) severity(warning) message(...)` twice:
//                    once on the initial thread, once in a masked block of a team of 2 (libomp
//                    prints its own "OMP: Warning #283" line on stderr for each).
//   error_fatal      `#pragma omp error at(execution) severity(fatal)`: the runtime ends the
//                    program (libomp 19: abort(), SIGABRT; stdout shows only "before").
//   target_nowait    (the build with -fopenmp-targets) one `target nowait` region and a
//                    taskwait: libomp runs it on its hidden-helper team.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

void nap(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

int lock_across() {
  omp_lock_t lock;
  omp_nest_lock_t nlock;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nlock);
  int held_in_between = 0;
#pragma omp parallel num_threads(2) shared(lock, nlock, held_in_between)
  {
#pragma omp masked
    {
      omp_set_lock(&lock);
      omp_set_nest_lock(&nlock);
    }
    if (omp_get_thread_num() == 1) nap(20);  // thread 0 holds both across the barrier's wait
#pragma omp barrier
#pragma omp masked
    {
      held_in_between = omp_test_nest_lock(&nlock);  // thread 0 owns it: nesting count 2
      omp_unset_nest_lock(&nlock);
      omp_unset_nest_lock(&nlock);
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_nest_lock(&nlock);
  omp_destroy_lock(&lock);
  std::printf("lock_across: nest count while held = %d\n", held_in_between);
  return 0;
}

int test_lock() {
  omp_lock_t lock;
  omp_nest_lock_t nlock;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nlock);
  int failed = 0, succeeded = 0;
#pragma omp parallel num_threads(2) shared(lock, nlock, failed, succeeded)
  {
    if (omp_get_thread_num() == 1) {
      omp_set_lock(&lock);
      omp_set_nest_lock(&nlock);
    }
#pragma omp barrier
    if (omp_get_thread_num() == 0) {
      failed += omp_test_lock(&lock) ? 0 : 1;
      failed += omp_test_nest_lock(&nlock) == 0 ? 1 : 0;
    }
#pragma omp barrier
    if (omp_get_thread_num() == 1) {
      omp_unset_nest_lock(&nlock);
      omp_unset_lock(&lock);
    }
#pragma omp barrier
    if (omp_get_thread_num() == 0) {
      if (omp_test_lock(&lock)) {
        ++succeeded;
        omp_unset_lock(&lock);
      }
      if (omp_test_nest_lock(&nlock) == 1) {
        ++succeeded;
        omp_unset_nest_lock(&nlock);
      }
    }
  }
  omp_destroy_nest_lock(&nlock);
  omp_destroy_lock(&lock);
  std::printf("test_lock: failed = %d, succeeded = %d\n", failed, succeeded);
  return 0;
}

int detach_early() {
  int ran = 0;
#pragma omp parallel num_threads(2) shared(ran)
#pragma omp single
  {
    omp_event_handle_t ev;
    std::memset(&ev, 0, sizeof ev);
#pragma omp task detach(ev) shared(ran)
    {
      omp_fulfill_event(ev);  // early: the body runs on after this
      nap(20);
      ran = 1;
    }
#pragma omp taskwait
  }
  std::printf("detach_early: body ran = %d\n", ran);
  return 0;
}

int detach_late() {
  std::atomic<int> body_done{0};
#pragma omp parallel num_threads(2) shared(body_done)
#pragma omp single
  {
    omp_event_handle_t ev;
    std::memset(&ev, 0, sizeof ev);
#pragma omp task detach(ev) shared(body_done)
    body_done.store(1);
    while (body_done.load() == 0) {
#pragma omp taskyield
    }
    nap(20);  // the body has ended; the task is still not complete
    omp_fulfill_event(ev);
#pragma omp taskwait
  }
  std::printf("detach_late: body done = %d\n", body_done.load());
  return 0;
}

int taskwait_depend() {
  int x = 0;
#pragma omp parallel num_threads(2) shared(x)
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x)
    x = 1;
#pragma omp taskwait depend(in : x)
#pragma omp task if (0) depend(inout : x) shared(x)
    x += 1;
  }
  std::printf("taskwait_depend: x = %d\n", x);
  return 0;
}

int cancel_taskgroup() {
  std::atomic<int> cancelled{0};
  std::atomic<int> bodies{0};
#pragma omp parallel num_threads(2) shared(cancelled, bodies)
#pragma omp single
  {
#pragma omp taskgroup
    {
#pragma omp task shared(cancelled)
      {
        cancelled.store(1);
#pragma omp cancel taskgroup
      }
      while (cancelled.load() == 0) {
#pragma omp taskyield
      }
      // Task A stored the flag just before its cancel directive: give that directive time to
      // take effect (on a loaded 2-core machine A can be preempted in between), else a task
      // created now may start before the taskgroup is cancelled.
      nap(100);
      for (int i = 0; i < 6; ++i) {
#pragma omp task shared(bodies)
        bodies.fetch_add(1);
      }
    }
  }
  std::printf("cancel_taskgroup: cancellation %s, bodies run = %d\n", omp_get_cancellation() ? "on" : "off", bodies.load());
  return 0;
}

int untied() {
  int sum = 0;
#pragma omp parallel num_threads(1) shared(sum)
  {
    for (int i = 1; i <= 4; ++i) {
#pragma omp task untied shared(sum) firstprivate(i)
      {
        sum += i;
#pragma omp taskyield
        sum += i;
      }
    }
#pragma omp taskwait
  }
  std::printf("untied: sum = %d\n", sum);
  return 0;
}

int error_warning() {
#pragma omp error at(execution) severity(warning) message("edge case: a warning from the error directive")
#pragma omp parallel num_threads(2)
  {
#pragma omp masked
    {
#pragma omp error at(execution) severity(warning) message("edge case: from a masked block")
    }
  }
  std::printf("error_warning: done\n");
  std::fflush(stdout);
  return 0;
}

int error_fatal() {
  std::printf("error_fatal: before\n");
  std::fflush(stdout);
#pragma omp error at(execution) severity(fatal) message("edge case: fatal error directive")
  std::printf("error_fatal: after\n");
  return 0;
}

// Built with the offload flags, the region runs through libomptarget's host plugin; `nowait` makes
// libomp start its hidden-helper team (8 threads by default) to run the target task.
int target_nowait() {
  int x = 1;
#pragma omp target nowait map(tofrom : x)
  x += 41;
#pragma omp taskwait
  std::printf("target_nowait: x = %d\n", x);
  return 0;
}

struct Case {
  const char* name;
  int (*run)();
};
const Case kCases[] = {
    {"lock_across", lock_across},       {"test_lock", test_lock},
    {"detach_early", detach_early},     {"detach_late", detach_late},
    {"taskwait_depend", taskwait_depend}, {"cancel_taskgroup", cancel_taskgroup},
    {"untied", untied},                 {"error_warning", error_warning},
    {"error_fatal", error_fatal},       {"target_nowait", target_nowait},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2)
    for (const Case& c : kCases)
      if (std::strcmp(argv[1], c.name) == 0) return c.run();
  std::fprintf(stderr, "usage: %s CASE; cases:", argv[0]);
  for (const Case& c : kCases) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "\n");
  return 2;
}
