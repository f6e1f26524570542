// What the chained OpenMP tool asks of the runtime. Its ompt_set_callback and ompt_get_callback
// go to this library's tables, and the inquiries that return data words (ompt_get_parallel_info,
// ompt_get_task_info) return the child's words of their pairs; every other entry point is the
// runtime's own. A device traced by this library stays ours: the child's ompt_start_trace for it
// returns 0 (one line says so), and it cannot change what the device traces.
#include <omp-tools.h>

#include <atomic>
#include <cstring>
#include <string>

#include "common/session/config.hpp"
#include "common/session/session.hpp"
#include "common/support/log.hpp"
#include "ompt_backend/chain_tables.hpp"
#include "ompt_backend/chain_words.hpp"
#include "ompt_backend/ompt_runtime.hpp"

namespace kob::omp::chain {

namespace {

std::atomic<ompt_function_lookup_t> g_runtime_lookup{nullptr};
std::atomic<ompt_function_lookup_t> g_device_lookup{nullptr};

ompt_data_t* child_word(ompt_data_t* word) {
  WordPair* p = pair_of(word);
  return p ? &p->theirs : word;
}

// The event as an int: a tool may pass any number, and an enum's range is the compiler's to assume.
int child_set_callback(int event, ompt_callback_t callback) {
  if (event <= 0 || event >= kEvents) return ompt_set_error;
  g_theirs[event].store(callback, std::memory_order_relaxed);
  return install(event);
}

int child_get_callback(int event, ompt_callback_t* callback) {
  if (event <= 0 || event >= kEvents || callback == nullptr) return 0;
  *callback = g_theirs[event].load(std::memory_order_relaxed);
  return *callback != nullptr;
}

int child_get_parallel_info(int ancestor_level, ompt_data_t** parallel_data, int* team_size) {
  if (g_rt.get_parallel_info == nullptr) return 0;
  ompt_data_t* word = nullptr;
  const int r = g_rt.get_parallel_info(ancestor_level, parallel_data ? &word : nullptr, team_size);
  if (parallel_data != nullptr) *parallel_data = word ? child_word(word) : nullptr;
  return r;
}

int child_get_task_info(int ancestor_level, int* flags, ompt_data_t** task_data, ompt_frame_t** task_frame,
                        ompt_data_t** parallel_data, int* thread_num) {
  if (g_rt.get_task_info == nullptr) return 0;
  ompt_data_t *task = nullptr, *parallel = nullptr;
  const int r = g_rt.get_task_info(ancestor_level, flags, task_data ? &task : nullptr, task_frame, parallel_data ? &parallel : nullptr,
                                   thread_num);
  if (task_data != nullptr) *task_data = task ? child_word(task) : nullptr;
  if (parallel_data != nullptr) *parallel_data = parallel ? child_word(parallel) : nullptr;
  return r;
}

// ---- a device whose trace is ours ----

int refused_start_trace(ompt_device_t*, ompt_callback_buffer_request_t, ompt_callback_buffer_complete_t) {
  log::warn_once(log::Once::ChainDeviceTrace,
                 std::string("the chained OpenMP tool ") + child_path() +
                     " asked to trace a device; this library traces devices (omp-device in --events), so its ompt_start_trace returned 0");
  return 0;
}
ompt_set_result_t refused_set_trace(ompt_device_t*, unsigned int, int) { return ompt_set_never; }
int refused_trace_call(ompt_device_t*) { return 0; }

ompt_interface_fn_t child_device_lookup(const char* name) {
  if (name == nullptr) return nullptr;
  if (std::strcmp(name, "ompt_start_trace") == 0) return reinterpret_cast<ompt_interface_fn_t>(&refused_start_trace);
  if (std::strcmp(name, "ompt_set_trace_ompt") == 0 || std::strcmp(name, "ompt_set_trace_native") == 0)
    return reinterpret_cast<ompt_interface_fn_t>(&refused_set_trace);
  if (std::strcmp(name, "ompt_pause_trace") == 0 || std::strcmp(name, "ompt_flush_trace") == 0 || std::strcmp(name, "ompt_stop_trace") == 0)
    return reinterpret_cast<ompt_interface_fn_t>(&refused_trace_call);
  const ompt_function_lookup_t device = g_device_lookup.load(std::memory_order_relaxed);
  return device ? device(name) : nullptr;
}

}  // namespace

void set_runtime_lookup(ompt_function_lookup_t lookup) { g_runtime_lookup.store(lookup, std::memory_order_relaxed); }

ompt_interface_fn_t child_lookup(const char* name) {
  if (name == nullptr) return nullptr;
  if (std::strcmp(name, "ompt_set_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&child_set_callback);
  if (std::strcmp(name, "ompt_get_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&child_get_callback);
  if (std::strcmp(name, "ompt_get_parallel_info") == 0)
    return g_rt.get_parallel_info ? reinterpret_cast<ompt_interface_fn_t>(&child_get_parallel_info) : nullptr;
  if (std::strcmp(name, "ompt_get_task_info") == 0)
    return g_rt.get_task_info ? reinterpret_cast<ompt_interface_fn_t>(&child_get_task_info) : nullptr;
  const ompt_function_lookup_t runtime = g_runtime_lookup.load(std::memory_order_relaxed);
  return runtime ? runtime(name) : nullptr;
}

// Devices are initialised one at a time (libomptarget, under its lock), and the child looks up
// what it needs inside its device_initialize: one saved lookup is enough.
ompt_function_lookup_t device_lookup_for_child(ompt_function_lookup_t runtime_lookup) {
  if (!recording(kGroupOmpDevice) || runtime_lookup == nullptr) return runtime_lookup;
  g_device_lookup.store(runtime_lookup, std::memory_order_relaxed);
  return &child_device_lookup;
}

}  // namespace kob::omp::chain
