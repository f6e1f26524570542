// threads_driver LIB MODE TEAM KERNELS - a std::thread program that plays Kokkos and an OpenMP
// runtime at once, for the ThreadSanitizer build (issue 20, item 3): libomp and Kokkos are not
// instrumented, so the races we look for must come from threads whose every synchronisation the
// sanitizer sees. It loads the library as Kokkos does (dlopen of the path), starts it as libomp
// does (ompt_start_tool, initialize with a lookup that offers ompt_set_callback), and then runs
// KERNELS Kokkos parallel_for kernels, each one OpenMP parallel region of a team of TEAM std::threads
// (persistent, as libomp's pool): implicit tasks, a loop, a critical section (mutex callbacks), an
// explicit task run by the next thread, the implicit barrier. Beside the team a second Kokkos thread
// pushes regions, allocates, deep-copies and fences, so that the library's writer thread, the team
// and it all meet on the same buffers, intern table and id counters.
//
// MODE record: the run ends with Kokkos finalize and OMPT finalize; prints "kernels N".
// MODE signal: after half the kernels a thread sends SIGTERM and the team goes on until it ends
//              the process (the library's watcher thread writes the files meanwhile).
// MODE fork:   after half the kernels the main thread forks; the child records three kernels of a
//              team of one, finalizes Kokkos and OMPT (its files are written) and _exits 0; the parent waits for it and prints "child 0".
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <omp-tools.h>

#include "test_program_util.hpp"

namespace {

ompt_callback_t g_cb[64];

ompt_set_result_t set_callback(ompt_callbacks_t event, ompt_callback_t cb) {
  if (static_cast<int>(event) <= 0 || static_cast<int>(event) >= 64) return ompt_set_error;
  g_cb[event] = cb;
  return ompt_set_always;
}

ompt_interface_fn_t lookup(const char* name) {
  if (std::strcmp(name, "ompt_set_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&set_callback);
  return nullptr;
}

template <class F>
F cb(ompt_callbacks_t event) {
  return reinterpret_cast<F>(g_cb[event]);
}

struct SpaceHandle {
  char name[64];
};

struct Kokkos {
  void (*init)(int, std::uint64_t, std::uint32_t, void*);
  void (*fin)();
  void (*begin_for)(const char*, std::uint32_t, std::uint64_t*);
  void (*end_for)(std::uint64_t);
  void (*begin_fence)(const char*, std::uint32_t, std::uint64_t*);
  void (*end_fence)(std::uint64_t);
  void (*push)(const char*);
  void (*pop)();
  void (*alloc)(SpaceHandle, const char*, const void*, std::uint64_t);
  void (*dealloc)(SpaceHandle, const char*, const void*, std::uint64_t);
  void (*begin_copy)(SpaceHandle, const char*, const void*, SpaceHandle, const char*, const void*, std::uint64_t);
  void (*end_copy)();
};

struct Omp {
  ompt_callback_thread_begin_t thread_begin;
  ompt_callback_thread_end_t thread_end;
  ompt_callback_parallel_begin_t parallel_begin;
  ompt_callback_parallel_end_t parallel_end;
  ompt_callback_implicit_task_t implicit_task;
  ompt_callback_work_t work;
  ompt_callback_sync_region_t sync_region;
  ompt_callback_sync_region_t sync_wait;
  ompt_callback_mutex_acquire_t mutex_acquire;
  ompt_callback_mutex_t mutex_acquired;
  ompt_callback_mutex_t mutex_released;
  ompt_callback_task_create_t task_create;
  ompt_callback_task_schedule_t task_schedule;
};

constexpr std::uint32_t kHostDevice = 0x01000001;
Kokkos k;
Omp o;
const void* const kSite = reinterpret_cast<const void*>(&lookup);  // any address of ours

// One kernel's shared state, written by the thread that starts the region before the barrier
// that lets the team in (libomp's fork), read by the team after it.
struct Region {
  ompt_data_t parallel{};
  std::vector<ompt_data_t> implicit, tasks;
  std::mutex critical;
  std::uint64_t sum = 0;
};

void team_member(Region& r, int team, int i, std::barrier<>& mid) {
  ompt_data_t& task = r.implicit[static_cast<std::size_t>(i)];
  o.implicit_task(ompt_scope_begin, &r.parallel, &task, static_cast<unsigned>(team), static_cast<unsigned>(i),
                  ompt_task_implicit);
  o.work(ompt_work_loop, ompt_scope_begin, &r.parallel, &task, 1000, kSite);
  o.mutex_acquire(ompt_mutex_critical, 0, 0, reinterpret_cast<ompt_wait_id_t>(&r.critical), kSite);
  {
    std::lock_guard<std::mutex> lock(r.critical);
    o.mutex_acquired(ompt_mutex_critical, reinterpret_cast<ompt_wait_id_t>(&r.critical), kSite);
    r.sum += static_cast<std::uint64_t>(i) + 1;
    o.mutex_released(ompt_mutex_critical, reinterpret_cast<ompt_wait_id_t>(&r.critical), kSite);
  }
  o.work(ompt_work_loop, ompt_scope_end, &r.parallel, &task, 1000, kSite);
  ompt_data_t& mine = r.tasks[static_cast<std::size_t>(i)];
  o.task_create(&task, nullptr, &mine, ompt_task_explicit, 0, kSite);
  mid.arrive_and_wait();  // the task is run by the next thread of the team
  ompt_data_t& other = r.tasks[static_cast<std::size_t>((i + 1) % team)];
  o.task_schedule(&task, ompt_task_switch, &other);
  o.task_schedule(&other, ompt_task_complete, &task);
  o.sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &r.parallel, &task, kSite);
  o.sync_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &r.parallel, &task, kSite);
  mid.arrive_and_wait();
  o.sync_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, &r.parallel, &task, kSite);
  o.sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, &r.parallel, &task, kSite);
  o.implicit_task(ompt_scope_end, nullptr, &task, static_cast<unsigned>(team),
                  static_cast<unsigned>(i), ompt_task_implicit);
}

// The OpenMP-backend kernel: one parallel region of the team; the caller is thread 0.
struct Team {
  int size;
  std::barrier<> start, mid, end;
  std::atomic<bool> stop{false};
  Region* region = nullptr;
  std::vector<std::thread> pool;
  ompt_data_t initial{};

  explicit Team(int n) : size(n), start(n), mid(n), end(n) {
    for (int i = 1; i < n; ++i)
      pool.emplace_back([this, i] {
        o.thread_begin(ompt_thread_worker, nullptr);
        for (;;) {
          start.arrive_and_wait();
          if (stop.load()) break;
          team_member(*region, size, i, mid);
          end.arrive_and_wait();
        }
        o.thread_end(nullptr);
      });
  }
  void kernel(const char* name) {
    std::uint64_t id = 0;
    k.begin_for(name, kHostDevice, &id);
    Region r;
    r.implicit.resize(static_cast<std::size_t>(size));
    r.tasks.resize(static_cast<std::size_t>(size));
    o.parallel_begin(&initial, nullptr, &r.parallel, static_cast<unsigned>(size),
                     ompt_parallel_team | ompt_parallel_invoker_runtime, kSite);
    region = &r;
    start.arrive_and_wait();
    team_member(r, size, 0, mid);
    end.arrive_and_wait();
    o.parallel_end(&r.parallel, &initial, ompt_parallel_team | ompt_parallel_invoker_runtime, kSite);
    k.end_for(id);
  }
  void join() {
    stop.store(true);
    start.arrive_and_wait();
    for (auto& t : pool) t.join();
  }
};

// What a second Kokkos thread does meanwhile (Kokkos 4 lets several threads use it).
void host_work(const std::atomic<bool>& done) {
  SpaceHandle host{"Host"};
  std::vector<char> a(4096), b(4096);
  while (!done.load()) {
    k.push("host_thread_region");
    k.alloc(host, "host_view", a.data(), a.size());
    k.begin_copy(host, "dst", b.data(), host, "src", a.data(), a.size());
    k.end_copy();
    std::uint64_t fence = 0;
    k.begin_fence("host_thread_fence", kHostDevice, &fence);
    k.end_fence(fence);
    k.dealloc(host, "host_view", a.data(), a.size());
    k.pop();
    usleep(100);  // a few per kernel: the team's events, not these, should fill the trace
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::string mode = argv[2];
  const int team = std::atoi(argv[3]), kernels = std::atoi(argv[4]);
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h || team < 1 || kernels < 2) return 2;
  k = Kokkos{sym<decltype(k.init)>(h, "kokkosp_init_library"), sym<decltype(k.fin)>(h, "kokkosp_finalize_library"),
             sym<decltype(k.begin_for)>(h, "kokkosp_begin_parallel_for"), sym<decltype(k.end_for)>(h, "kokkosp_end_parallel_for"),
             sym<decltype(k.begin_fence)>(h, "kokkosp_begin_fence"), sym<decltype(k.end_fence)>(h, "kokkosp_end_fence"),
             sym<decltype(k.push)>(h, "kokkosp_push_profile_region"), sym<decltype(k.pop)>(h, "kokkosp_pop_profile_region"),
             sym<decltype(k.alloc)>(h, "kokkosp_allocate_data"), sym<decltype(k.dealloc)>(h, "kokkosp_deallocate_data"),
             sym<decltype(k.begin_copy)>(h, "kokkosp_begin_deep_copy"), sym<decltype(k.end_copy)>(h, "kokkosp_end_deep_copy")};
  auto start_tool = sym<ompt_start_tool_result_t* (*)(unsigned, const char*)>(h, "ompt_start_tool");
  if (!k.init || !k.fin || !k.begin_for || !k.end_for || !k.begin_fence || !k.end_fence || !k.push || !k.pop ||
      !k.alloc || !k.dealloc || !k.begin_copy || !k.end_copy || !start_tool)
    return 2;

  // libomp starts its tool at its first OpenMP call, before Kokkos::initialize reaches the tools.
  ompt_start_tool_result_t* tool = start_tool(201811, "threads_driver (std::thread stand-in runtime)");
  if (!tool || !tool->initialize(&lookup, 0, &tool->tool_data)) return 3;
  o = Omp{cb<ompt_callback_thread_begin_t>(ompt_callback_thread_begin), cb<ompt_callback_thread_end_t>(ompt_callback_thread_end),
          cb<ompt_callback_parallel_begin_t>(ompt_callback_parallel_begin), cb<ompt_callback_parallel_end_t>(ompt_callback_parallel_end),
          cb<ompt_callback_implicit_task_t>(ompt_callback_implicit_task), cb<ompt_callback_work_t>(ompt_callback_work),
          cb<ompt_callback_sync_region_t>(ompt_callback_sync_region), cb<ompt_callback_sync_region_t>(ompt_callback_sync_region_wait),
          cb<ompt_callback_mutex_acquire_t>(ompt_callback_mutex_acquire), cb<ompt_callback_mutex_t>(ompt_callback_mutex_acquired),
          cb<ompt_callback_mutex_t>(ompt_callback_mutex_released), cb<ompt_callback_task_create_t>(ompt_callback_task_create),
          cb<ompt_callback_task_schedule_t>(ompt_callback_task_schedule)};
  if (!o.thread_begin || !o.thread_end || !o.parallel_begin || !o.parallel_end || !o.implicit_task || !o.work ||
      !o.sync_region || !o.sync_wait || !o.mutex_acquire || !o.mutex_acquired || !o.mutex_released || !o.task_create ||
      !o.task_schedule) {
    std::printf("a host callback was not registered\n");
    return 4;
  }
  o.thread_begin(ompt_thread_initial, nullptr);
  k.init(0, 20240906, 0, nullptr);

  std::atomic<bool> host_done{false};
  std::thread host([&] { host_work(host_done); });
  Team t(team);
  int child_status = -1;
  for (int n = 0; n < kernels || mode == "signal"; ++n) {
    if (n == kernels / 2 && mode == "signal") {
      std::thread([] { kill(getpid(), SIGTERM); }).detach();
    }
    if (n == kernels / 2 && mode == "fork") {
      const pid_t child = fork();
      if (child == 0) {
        // Only this thread goes on here: a team of one, no host thread.
        Team alone(1);
        for (int i = 0; i < 3; ++i) alone.kernel("child_kernel");
        alone.join();
        k.fin();
        tool->finalize(&tool->tool_data);  // the last of the two: the child writes its files here
        // Not exit(): the parent's threads own objects of this program that the child cannot
        // reach, which a leak checker at exit would report (the tool keeps its own reachable).
        _exit(0);
      }
      int status = 0;
      waitpid(child, &status, 0);
      child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (n > 100000) return 5;  // the signal never ended the process
    t.kernel("team_kernel");
  }
  t.join();
  host_done.store(true);
  host.join();
  k.fin();
  o.thread_end(nullptr);
  tool->finalize(&tool->tool_data);
  std::printf("kernels %d\n", kernels);
  if (mode == "fork") std::printf("child %d\n", child_status);
  return 0;
}
