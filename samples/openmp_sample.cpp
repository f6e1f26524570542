// openmp_sample.cpp - a plain OpenMP program (no Kokkos) that produces a known set of OMPT events.
// Build: clang++-22 -std=c++20 -O2 -fopenmp samples/openmp_sample.cpp -o openmp_sample
//
// Every construct has a fixed num_threads(...) except the last region (R6), which uses the default
// team size T (OMP_NUM_THREADS; the tests use 2 or 4). The program calls
// omp_set_max_active_levels(2) so the nested region really runs with 2 threads.
// Deterministic (no timing, integer arithmetic); exact stdout (7 lines):
//
//   tasks: c = 3, taskgroup sum = 10, taskloop sum = 85344
//   locks: counter = 12, nested = 4, critical = 8
//   loops: static sum = 499500, dynamic sum = 999000
//   sections: 111, single = 1, masked = 1
//   nested: inner threads = 4
//   reduction: sum = 49995000
//   done
//
// OMPT EVENTS (verified with a counting OMPT tool against libomp 19.1.7 and libomp 22, T = 2 and 4).
// T = default team size (OMP_NUM_THREADS). Counts are per callback invocation.
//
// Parallel regions: 8 parallel_begin / 8 parallel_end, all with flags
//   ompt_parallel_team|ompt_parallel_invoker_runtime (0x80000002):
//   R1 tasks        num_threads(4)   team 4
//   R2 mutexes      num_threads(4)   team 4
//   R3 worksharing  num_threads(4)   team 4
//   R4 nested outer num_threads(2)   team 2; each of its 2 threads opens
//   R4a nested inner num_threads(2)  x2, team 2 each (nesting level 2)
//   R5 one thread   num_threads(1)   team 1 (serialized region)
//   R6 reduction    (default)        team T
//   requested_team_size: 4 x3, 2 x3, 1 x1, T x1.
// Implicit tasks (ompt_task_implicit): 4+4+4+2+2+2+1+T = 19 + T (21 for T=2, 23 for T=4), each with
//   one begin and one end. Initial task (ompt_task_initial): 1 begin, 1 end.
// barrier_implicit_parallel: 18 + T for T >= 2 (one per implicit task, except none in the
//   serialized R5; with T = 1, R6 is serialized too and the count is 18).
// Threads: 1 initial + 3 worker thread_begin (for T <= 4), all 4 thread_end at exit.
//
// Explicit tasks: 15 task_create (all ompt_task_explicit), each scheduled once (task_schedule
//   switch-in 15, complete 15):
//   3 with dependences in R1: A depend(out:a), B depend(out:b), C depend(in:a,b) depend(out:c)
//     -> 3 `dependences` callbacks with 1, 1 and 3 entries (5 entries);
//     task_dependence (A->C, B->C) is 0..2 depending on timing: do not assert it.
//   4 in an explicit taskgroup, 8 from one taskloop (num_tasks(8) over 64 iterations; team of 4, so
//   libomp creates them linearly, no splitting tasks; dispatch taskloop_chunk: do not assert).
// taskwait: 1 (sync_region taskwait). taskgroup: 2 (the explicit one + the taskloop's implicit one).
// taskloop: 1 (work taskloop).
//
// Mutexes (R2, 4 threads):
//   omp_lock_t: lock_init 1, lock_destroy 1, 12 acquire/acquired/released (4 threads x 3).
//   omp_nest_lock_t: lock_init 1, lock_destroy 1; each thread sets it twice and unsets it twice:
//     mutex_acquire nest_lock 8, mutex_acquired nest_lock 4 (first set), nest_lock scope begin 4
//     (second set, already owned), nest_lock scope end 4 (first unset), mutex_released nest_lock 4.
//   critical: 8 acquire/acquired/released (4 threads x (1 unnamed + 1 named critical)).
// Explicit barriers: 2 constructs (R2, R3), met by 4 threads each: 8 barrier_explicit.
//
// Worksharing (every thread of the team reports each construct once):
//   R3 loop schedule(static), 1000 iterations      -> 4 work loop_static
//   R3 loop schedule(dynamic,16), 1000 iterations  -> 4 work loop_dynamic, 63 chunks
//   R3 sections (3 sections)                       -> 4 work sections, 4 dispatch section (libomp
//                                                     reports one per thread of the team)
//   R3 single                                      -> 1 single_executor + 3 single_other
//   R3 masked                                      -> 1 masked (thread 0)
//   R1 single (around the tasks)                   -> 1 single_executor + 3 single_other
//   R6 parallel for reduction(+:sum), default (static) schedule, 10000 iterations
//                                                  -> T work loop_static, no workshare barrier
//                                                     (combined construct: the loop is nowait)
//   Totals: loop_static 4 + T, loop_dynamic 4, sections 4, single_executor 2, single_other 6,
//   masked 1, dispatch ws_loop_chunk 63 + 4 + T for T >= 2 (dynamic chunks + one static chunk per
//   thread; 67 for T = 1).
// barrier_implicit_workshare: 20 (R1 single 4 + R3 static loop 4 + dynamic loop 4 + sections 4 +
//   single 4); none from R6 and none from masked.
// Reduction callbacks (ompt_callback_reduction): 0 with libomp 19/22 for this reduction.

#include <omp.h>

#include <cstdio>

static int tasks_part(int& c_out, int& tg_sum_out, long& tl_sum_out) {
  int a = 0, b = 0, c = 0;
  int tg_sum = 0;
  long arr[64] = {};
  // R1
#pragma omp parallel num_threads(4) shared(a, b, c, tg_sum, arr)
  {
#pragma omp single
    {
#pragma omp task depend(out : a) shared(a)
      a = 1;
#pragma omp task depend(out : b) shared(b)
      b = 2;
#pragma omp task depend(in : a, b) depend(out : c) shared(a, b, c)
      c = a + b;
#pragma omp taskwait

#pragma omp taskgroup
      {
        for (int i = 0; i < 4; ++i) {
#pragma omp task shared(tg_sum) firstprivate(i)
          {
#pragma omp atomic
            tg_sum += i + 1;
          }
        }
      }

#pragma omp taskloop num_tasks(8) shared(arr)
      for (int i = 0; i < 64; ++i) arr[i] = static_cast<long>(i) * i;
    }
  }
  long s = 0;
  for (int i = 0; i < 64; ++i) s += arr[i];
  c_out = c;
  tg_sum_out = tg_sum;
  tl_sum_out = s;
  return 0;
}

int main() {
  omp_set_max_active_levels(2);

  int c = 0, tg_sum = 0;
  long tl_sum = 0;
  tasks_part(c, tg_sum, tl_sum);
  std::printf("tasks: c = %d, taskgroup sum = %d, taskloop sum = %ld\n", c, tg_sum, tl_sum);

  // R2: locks, nested locks, critical, explicit barrier
  {
    omp_lock_t lock;
    omp_nest_lock_t nlock;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nlock);
    int counter = 0, nested = 0, crit = 0, crit_named = 0;
#pragma omp parallel num_threads(4) shared(lock, nlock, counter, nested, crit, crit_named)
    {
      for (int k = 0; k < 3; ++k) {
        omp_set_lock(&lock);
        ++counter;
        omp_unset_lock(&lock);
      }
      omp_set_nest_lock(&nlock);
      omp_set_nest_lock(&nlock);
      ++nested;
      omp_unset_nest_lock(&nlock);
      omp_unset_nest_lock(&nlock);
#pragma omp critical
      ++crit;
#pragma omp critical(sample_named)
      ++crit_named;  // its own counter: the two critical names do not exclude each other
#pragma omp barrier
    }
    omp_destroy_nest_lock(&nlock);
    omp_destroy_lock(&lock);
    std::printf("locks: counter = %d, nested = %d, critical = %d\n", counter, nested, crit + crit_named);
  }

  // R3: worksharing
  {
    static int av[1000], bv[1000];
    int sec = 0, single_count = 0, masked_count = 0;
#pragma omp parallel num_threads(4) shared(sec, single_count, masked_count)
    {
#pragma omp for schedule(static)
      for (int i = 0; i < 1000; ++i) av[i] = i;
#pragma omp for schedule(dynamic, 16)
      for (int i = 0; i < 1000; ++i) bv[i] = 2 * av[i];
#pragma omp sections
      {
#pragma omp section
        {
#pragma omp atomic
          sec += 1;
        }
#pragma omp section
        {
#pragma omp atomic
          sec += 10;
        }
#pragma omp section
        {
#pragma omp atomic
          sec += 100;
        }
      }
#pragma omp single
      single_count += 1;
#pragma omp masked
      masked_count += 1;
#pragma omp barrier
    }
    long s1 = 0, s2 = 0;
    for (int i = 0; i < 1000; ++i) {
      s1 += av[i];
      s2 += bv[i];
    }
    std::printf("loops: static sum = %ld, dynamic sum = %ld\n", s1, s2);
    std::printf("sections: %d, single = %d, masked = %d\n", sec, single_count, masked_count);
  }

  // R4: nested parallel regions
  {
    int inner = 0;
#pragma omp parallel num_threads(2) shared(inner)
    {
#pragma omp parallel num_threads(2) shared(inner)
      {
#pragma omp atomic
        inner += 1;
      }
    }
    std::printf("nested: inner threads = %d\n", inner);
  }

  // R5: a team of one thread
  {
    int one = 0;
#pragma omp parallel num_threads(1) shared(one)
    one = omp_get_num_threads();
    (void)one;
  }

  // R6: reduction with the default team size T
  {
    long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < 10000; ++i) sum += i;
    std::printf("reduction: sum = %ld\n", sum);
  }

  std::printf("done\n");
  return 0;
}
