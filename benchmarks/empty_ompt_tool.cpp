// empty_ompt_tool.cpp - libkob_empty_ompt_tool.so, the baseline "empty" OMPT tool.
//
// Exports ompt_start_tool and, in its initialize, registers with ompt_set_callback the same host
// callbacks as libkokkos_ompt_bridge.so with its default --events=all (the table in
// src/ompt_backend/host_callbacks.cpp; keep the two in step), each with an empty body. Loading it
// (OMP_TOOL_LIBRARIES=<this library>) makes the OpenMP runtime take its "a tool is attached"
// paths and call every one of those callbacks, so
//   cost(our library) - cost(empty OMPT tool)
// is what our callbacks themselves cost. Used by benchmarks/run_ompt.sh.
//
// KOB_EMPTY_OMPT_VERBOSE=1 prints each ompt_set_callback result to stderr.
#include <omp-tools.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// One function per event, with the event's signature, doing nothing.
void on_thread_begin(ompt_thread_t, ompt_data_t*) {}
void on_thread_end(ompt_data_t*) {}
void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int, int, const void*) {}
void on_parallel_end(ompt_data_t*, ompt_data_t*, int, const void*) {}
void on_implicit_task(ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, unsigned int, unsigned int, int) {}
void on_work(ompt_work_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, std::uint64_t, const void*) {}
void on_masked(ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, const void*) {}
void on_dispatch(ompt_data_t*, ompt_data_t*, ompt_dispatch_t, ompt_data_t) {}
void on_sync_region(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, const void*) {}
void on_sync_region_wait(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, const void*) {}
void on_flush(ompt_data_t*, const void*) {}
void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, int, int, const void*) {}
void on_task_schedule(ompt_data_t*, ompt_task_status_t, ompt_data_t*) {}
void on_dependences(ompt_data_t*, const ompt_dependence_t*, int) {}
void on_task_dependence(ompt_data_t*, ompt_data_t*) {}
void on_mutex_acquire(ompt_mutex_t, unsigned int, unsigned int, ompt_wait_id_t, const void*) {}
void on_mutex(ompt_mutex_t, ompt_wait_id_t, const void*) {}
void on_nest_lock(ompt_scope_endpoint_t, ompt_wait_id_t, const void*) {}
void on_cancel(ompt_data_t*, int, const void*) {}
int on_control_tool(std::uint64_t, std::uint64_t, void*, const void*) { return 0; }

template <class F>
ompt_callback_t cb(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

struct Entry {
  ompt_callbacks_t event;
  const char* name;
  ompt_callback_t fn;
};

int initialize(ompt_function_lookup_t lookup, int /*initial_device_num*/, ompt_data_t* /*tool_data*/) {
  const auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return 0;
  // The same events, in the same order, as kob::omp::host_callbacks().
  const Entry table[] = {
      {ompt_callback_thread_begin, "thread_begin", cb(on_thread_begin)},
      {ompt_callback_thread_end, "thread_end", cb(on_thread_end)},
      {ompt_callback_parallel_begin, "parallel_begin", cb(on_parallel_begin)},
      {ompt_callback_parallel_end, "parallel_end", cb(on_parallel_end)},
      {ompt_callback_implicit_task, "implicit_task", cb(on_implicit_task)},
      {ompt_callback_work, "work", cb(on_work)},
      {ompt_callback_masked, "masked", cb(on_masked)},
      {ompt_callback_dispatch, "dispatch", cb(on_dispatch)},
      {ompt_callback_sync_region, "sync_region", cb(on_sync_region)},
      {ompt_callback_sync_region_wait, "sync_region_wait", cb(on_sync_region_wait)},
      {ompt_callback_reduction, "reduction", cb(on_sync_region)},
      {ompt_callback_flush, "flush", cb(on_flush)},
      {ompt_callback_task_create, "task_create", cb(on_task_create)},
      {ompt_callback_task_schedule, "task_schedule", cb(on_task_schedule)},
      {ompt_callback_dependences, "dependences", cb(on_dependences)},
      {ompt_callback_task_dependence, "task_dependence", cb(on_task_dependence)},
      {ompt_callback_mutex_acquire, "mutex_acquire", cb(on_mutex_acquire)},
      {ompt_callback_mutex_acquired, "mutex_acquired", cb(on_mutex)},
      {ompt_callback_mutex_released, "mutex_released", cb(on_mutex)},
      {ompt_callback_nest_lock, "nest_lock", cb(on_nest_lock)},
      {ompt_callback_lock_init, "lock_init", cb(on_mutex_acquire)},
      {ompt_callback_lock_destroy, "lock_destroy", cb(on_mutex)},
      {ompt_callback_cancel, "cancel", cb(on_cancel)},
      {ompt_callback_control_tool, "control_tool", cb(on_control_tool)},
  };
  const char* verbose = std::getenv("KOB_EMPTY_OMPT_VERBOSE");
  for (const Entry& e : table) {
    const int r = set_callback(e.event, e.fn);
    if (verbose != nullptr && verbose[0] == '1') std::fprintf(stderr, "kob_empty_ompt_tool: ompt_set_callback(%s) = %d\n", e.name, r);
  }
  return 1;
}

void finalize(ompt_data_t* /*tool_data*/) {}

}  // namespace

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int /*omp_version*/, const char* /*runtime_version*/) {
  static ompt_start_tool_result_t result{&initialize, &finalize, ompt_data_t{}};
  return &result;
}
