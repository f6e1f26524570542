// The callbacks registered with the runtime while a chained OpenMP tool runs: each calls this
// library's callback and the child's (where each has one), each with its own ompt_data_t words
// (chain_words.hpp). At a begin the child's comes first and at an end ours does, so that no span
// this library records holds the child's own cost; elsewhere ours comes first. Thread words are
// the child's alone (this library does not use its own). A target region's word is paired at its
// begin; a data operation or submit outside any target region gets the pair the runtime's word
// names (libomptarget leaves the last region's there, as each tool alone would see it), or, where
// the word is empty, a word for each tool that lasts for the call.
#include <omp-tools.h>

#include "ompt_backend/chain_tables.hpp"
#include "ompt_backend/chain_words.hpp"

namespace kob::omp::chain {

std::atomic<ompt_callback_t> g_ours[kEvents];
std::atomic<ompt_callback_t> g_theirs[kEvents];

namespace {

inline ompt_data_t* O(WordPair* p) { return p ? &p->ours : nullptr; }
inline ompt_data_t* C(WordPair* p) { return p ? &p->theirs : nullptr; }
inline ompt_id_t* O_id(WordPair* p) { return p ? &p->ours.value : nullptr; }
inline ompt_id_t* C_id(WordPair* p) { return p ? &p->theirs.value : nullptr; }

// Calls `call` for the child then ours at a begin, ours then the child's otherwise.
template <class Fn, class Call>
inline void both(ompt_callbacks_t e, bool child_first, Call&& call) {
  const Fn mine = ours<Fn>(e), child = theirs<Fn>(e);
  if (child_first && child) call(child, false);
  if (mine) call(mine, true);
  if (!child_first && child) call(child, false);
}

// A target region's word for a data operation, submit or map: its pair, or `scratch` where the
// word is empty.
inline WordPair* target_pair(ompt_data_t* target_data, WordPair& scratch) {
  WordPair* p = pair_if_any(target_data);
  return p ? p : (target_data ? &scratch : nullptr);
}

void thread_begin(ompt_thread_t type, ompt_data_t* thread_data) {
  both<ompt_callback_thread_begin_t>(ompt_callback_thread_begin, true, [&](auto f, bool) { f(type, thread_data); });
}

void thread_end(ompt_data_t* thread_data) {
  both<ompt_callback_thread_end_t>(ompt_callback_thread_end, false, [&](auto f, bool) { f(thread_data); });
}

void parallel_begin(ompt_data_t* task, const ompt_frame_t* frame, ompt_data_t* parallel, unsigned int requested, int flags,
                    const void* codeptr) {
  WordPair *t = pair_of(task), *p = begin_pair(parallel);
  both<ompt_callback_parallel_begin_t>(ompt_callback_parallel_begin, true, [&](auto f, bool mine) {
    f(mine ? O(t) : C(t), frame, mine ? O(p) : C(p), requested, flags, codeptr);
  });
}

void parallel_end(ompt_data_t* parallel, ompt_data_t* task, int flags, const void* codeptr) {
  WordPair *p = pair_of(parallel), *t = pair_of(task);
  both<ompt_callback_parallel_end_t>(ompt_callback_parallel_end, false,
                                     [&](auto f, bool mine) { f(mine ? O(p) : C(p), mine ? O(t) : C(t), flags, codeptr); });
  release(parallel);
}

void implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, unsigned int n, unsigned int index,
                   int flags) {
  const bool begin = endpoint == ompt_scope_begin;
  WordPair *p = pair_of(parallel), *t = begin ? begin_pair(task) : pair_of(task);
  both<ompt_callback_implicit_task_t>(ompt_callback_implicit_task, begin, [&](auto f, bool mine) {
    f(endpoint, mine ? O(p) : C(p), mine ? O(t) : C(t), n, index, flags);
  });
  if (!begin) release(task);
}

void task_create(ompt_data_t* task, const ompt_frame_t* frame, ompt_data_t* new_task, int flags, int has_dependences,
                 const void* codeptr) {
  WordPair *t = pair_of(task), *n = begin_pair(new_task);
  both<ompt_callback_task_create_t>(ompt_callback_task_create, false, [&](auto f, bool mine) {
    f(mine ? O(t) : C(t), frame, mine ? O(n) : C(n), flags, has_dependences, codeptr);
  });
}

// The prior task has ended for good (a detached task ends at its late fulfill).
inline bool task_ended(ompt_task_status_t s) {
  return s == ompt_task_complete || s == ompt_task_cancel || s == ompt_task_late_fulfill || s == ompt_taskwait_complete;
}

void task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  WordPair *p = pair_of(prior), *n = pair_of(next);
  both<ompt_callback_task_schedule_t>(ompt_callback_task_schedule, false,
                                      [&](auto f, bool mine) { f(mine ? O(p) : C(p), status, mine ? O(n) : C(n)); });
  if (task_ended(status)) release(prior);
}

void dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  WordPair* t = pair_of(task);
  both<ompt_callback_dependences_t>(ompt_callback_dependences, false, [&](auto f, bool mine) { f(mine ? O(t) : C(t), deps, ndeps); });
}

void task_dependence(ompt_data_t* src, ompt_data_t* sink) {
  WordPair *s = pair_of(src), *k = pair_of(sink);
  both<ompt_callback_task_dependence_t>(ompt_callback_task_dependence, false,
                                        [&](auto f, bool mine) { f(mine ? O(s) : C(s), mine ? O(k) : C(k)); });
}

void work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, std::uint64_t count,
          const void* codeptr) {
  WordPair *p = pair_of(parallel), *t = pair_of(task);
  both<ompt_callback_work_t>(ompt_callback_work, endpoint == ompt_scope_begin, [&](auto f, bool mine) {
    f(type, endpoint, mine ? O(p) : C(p), mine ? O(t) : C(t), count, codeptr);
  });
}

void masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, const void* codeptr) {
  WordPair *p = pair_of(parallel), *t = pair_of(task);
  both<ompt_callback_masked_t>(ompt_callback_masked, endpoint == ompt_scope_begin,
                               [&](auto f, bool mine) { f(endpoint, mine ? O(p) : C(p), mine ? O(t) : C(t), codeptr); });
}

void dispatch(ompt_data_t* parallel, ompt_data_t* task, ompt_dispatch_t kind, ompt_data_t instance) {
  WordPair *p = pair_of(parallel), *t = pair_of(task);
  both<ompt_callback_dispatch_t>(ompt_callback_dispatch, false,
                                 [&](auto f, bool mine) { f(mine ? O(p) : C(p), mine ? O(t) : C(t), kind, instance); });
}

// sync_region, sync_region_wait and reduction share a signature.
template <ompt_callbacks_t E>
void sync(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, const void* codeptr) {
  WordPair *p = pair_of(parallel), *t = pair_of(task);
  both<ompt_callback_sync_region_t>(E, endpoint == ompt_scope_begin,
                                    [&](auto f, bool mine) { f(kind, endpoint, mine ? O(p) : C(p), mine ? O(t) : C(t), codeptr); });
}

// mutex_acquire and lock_init; an acquire begins a wait.
template <ompt_callbacks_t E>
void mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id, const void* codeptr) {
  both<ompt_callback_mutex_acquire_t>(E, E == ompt_callback_mutex_acquire,
                                      [&](auto f, bool) { f(kind, hint, impl, wait_id, codeptr); });
}

// mutex_acquired, mutex_released and lock_destroy.
template <ompt_callbacks_t E>
void mutex(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr) {
  both<ompt_callback_mutex_t>(E, false, [&](auto f, bool) { f(kind, wait_id, codeptr); });
}

void nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* codeptr) {
  both<ompt_callback_nest_lock_t>(ompt_callback_nest_lock, endpoint == ompt_scope_begin,
                                  [&](auto f, bool) { f(endpoint, wait_id, codeptr); });
}

void flush(ompt_data_t* thread_data, const void* codeptr) {
  both<ompt_callback_flush_t>(ompt_callback_flush, false, [&](auto f, bool) { f(thread_data, codeptr); });
}

void cancel(ompt_data_t* task, int flags, const void* codeptr) {
  WordPair* t = pair_of(task);
  both<ompt_callback_cancel_t>(ompt_callback_cancel, false, [&](auto f, bool mine) { f(mine ? O(t) : C(t), flags, codeptr); });
}

// omp_control_tool returns the child's answer when it has the callback, else ours.
int control_tool(std::uint64_t command, std::uint64_t modifier, void* arg, const void* codeptr) {
  int answer = 0;
  both<ompt_callback_control_tool_t>(ompt_callback_control_tool, false, [&](auto f, bool mine) {
    const int r = f(command, modifier, arg, codeptr);
    if (!mine || theirs<ompt_callback_control_tool_t>(ompt_callback_control_tool) == nullptr) answer = r;
  });
  return answer;
}

void error(ompt_severity_t severity, const char* message, size_t length, const void* codeptr) {
  both<ompt_callback_error_t>(ompt_callback_error, false, [&](auto f, bool) { f(severity, message, length, codeptr); });
}

// ---- devices and target regions ----

void device_initialize(int device_num, const char* type, ompt_device_t* device, ompt_function_lookup_t lookup,
                       const char* documentation) {
  both<ompt_callback_device_initialize_t>(ompt_callback_device_initialize, false, [&](auto f, bool mine) {
    f(device_num, type, device, mine ? lookup : device_lookup_for_child(lookup), documentation);
  });
}

void device_finalize(int device_num) {
  both<ompt_callback_device_finalize_t>(ompt_callback_device_finalize, false, [&](auto f, bool) { f(device_num); });
}

void device_load(int device_num, const char* file, std::int64_t offset, void* vma, size_t bytes, void* host_addr, void* device_addr,
                 std::uint64_t module_id) {
  both<ompt_callback_device_load_t>(ompt_callback_device_load, false, [&](auto f, bool) {
    f(device_num, file, offset, vma, bytes, host_addr, device_addr, module_id);
  });
}

void device_unload(int device_num, std::uint64_t module_id) {
  both<ompt_callback_device_unload_t>(ompt_callback_device_unload, false, [&](auto f, bool) { f(device_num, module_id); });
}

void target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t* task, ompt_id_t target_id,
            const void* codeptr) {
  WordPair* t = pair_of(task);
  both<ompt_callback_target_t>(ompt_callback_target, endpoint == ompt_scope_begin, [&](auto f, bool mine) {
    f(kind, endpoint, device_num, mine ? O(t) : C(t), target_id, codeptr);
  });
}

void target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t* task, ompt_data_t* target_task,
                ompt_data_t* target_data, const void* codeptr) {
  const bool begin = endpoint == ompt_scope_begin;
  WordPair *t = pair_of(task), *tt = pair_of(target_task), *d = begin ? begin_pair(target_data) : pair_of(target_data);
  both<ompt_callback_target_emi_t>(ompt_callback_target_emi, begin, [&](auto f, bool mine) {
    f(kind, endpoint, device_num, mine ? O(t) : C(t), mine ? O(tt) : C(tt), mine ? O(d) : C(d), codeptr);
  });
  if (!begin) release(target_data);
}

void target_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t optype, void* src, int src_device,
                    void* dest, int dest_device, size_t bytes, const void* codeptr) {
  both<ompt_callback_target_data_op_t>(ompt_callback_target_data_op, false, [&](auto f, bool) {
    f(target_id, host_op_id, optype, src, src_device, dest, dest_device, bytes, codeptr);
  });
}

void target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t* target_task, ompt_data_t* target_data, ompt_id_t* host_op_id,
                        ompt_target_data_op_t optype, void* src, int src_device, void* dest, int dest_device, size_t bytes,
                        const void* codeptr) {
  WordPair scratch{};
  const bool begin = endpoint == ompt_scope_begin;
  WordPair *tt = pair_of(target_task), *d = target_pair(target_data, scratch), *h = begin ? begin_pair(host_op_id) : pair_of(host_op_id);
  both<ompt_callback_target_data_op_emi_t>(ompt_callback_target_data_op_emi, begin, [&](auto f, bool mine) {
    f(endpoint, mine ? O(tt) : C(tt), mine ? O(d) : C(d), mine ? O_id(h) : C_id(h), optype, src, src_device, dest, dest_device,
      bytes, codeptr);
  });
  if (!begin) release(host_op_id);
}

void target_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int teams) {
  both<ompt_callback_target_submit_t>(ompt_callback_target_submit, false, [&](auto f, bool) { f(target_id, host_op_id, teams); });
}

void target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t* target_data, ompt_id_t* host_op_id, unsigned int teams) {
  WordPair scratch{};
  const bool begin = endpoint == ompt_scope_begin;
  WordPair *d = target_pair(target_data, scratch), *h = begin ? begin_pair(host_op_id) : pair_of(host_op_id);
  both<ompt_callback_target_submit_emi_t>(ompt_callback_target_submit_emi, begin, [&](auto f, bool mine) {
    f(endpoint, mine ? O(d) : C(d), mine ? O_id(h) : C_id(h), teams);
  });
  if (!begin) release(host_op_id);
}

void target_map(ompt_id_t target_id, unsigned int n, void** host_addr, void** device_addr, size_t* bytes, unsigned int* flags,
                const void* codeptr) {
  both<ompt_callback_target_map_t>(ompt_callback_target_map, false,
                                   [&](auto f, bool) { f(target_id, n, host_addr, device_addr, bytes, flags, codeptr); });
}

void target_map_emi(ompt_data_t* target_data, unsigned int n, void** host_addr, void** device_addr, size_t* bytes,
                    unsigned int* flags, const void* codeptr) {
  WordPair scratch{};
  WordPair* d = target_pair(target_data, scratch);
  both<ompt_callback_target_map_emi_t>(ompt_callback_target_map_emi, false, [&](auto f, bool mine) {
    f(mine ? O(d) : C(d), n, host_addr, device_addr, bytes, flags, codeptr);
  });
}

template <class F>
ompt_callback_t cb(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

}  // namespace

ompt_callback_t wrapper(int event) {
  switch (event) {
    case ompt_callback_thread_begin: return cb(thread_begin);
    case ompt_callback_thread_end: return cb(thread_end);
    case ompt_callback_parallel_begin: return cb(parallel_begin);
    case ompt_callback_parallel_end: return cb(parallel_end);
    case ompt_callback_task_create: return cb(task_create);
    case ompt_callback_task_schedule: return cb(task_schedule);
    case ompt_callback_implicit_task: return cb(implicit_task);
    case ompt_callback_target: return cb(target);
    case ompt_callback_target_data_op: return cb(target_data_op);
    case ompt_callback_target_submit: return cb(target_submit);
    case ompt_callback_control_tool: return cb(control_tool);
    case ompt_callback_device_initialize: return cb(device_initialize);
    case ompt_callback_device_finalize: return cb(device_finalize);
    case ompt_callback_device_load: return cb(device_load);
    case ompt_callback_device_unload: return cb(device_unload);
    case ompt_callback_sync_region_wait: return cb(sync<ompt_callback_sync_region_wait>);
    case ompt_callback_mutex_released: return cb(mutex<ompt_callback_mutex_released>);
    case ompt_callback_dependences: return cb(dependences);
    case ompt_callback_task_dependence: return cb(task_dependence);
    case ompt_callback_work: return cb(work);
    case ompt_callback_masked: return cb(masked);
    case ompt_callback_target_map: return cb(target_map);
    case ompt_callback_sync_region: return cb(sync<ompt_callback_sync_region>);
    case ompt_callback_lock_init: return cb(mutex_acquire<ompt_callback_lock_init>);
    case ompt_callback_lock_destroy: return cb(mutex<ompt_callback_lock_destroy>);
    case ompt_callback_mutex_acquire: return cb(mutex_acquire<ompt_callback_mutex_acquire>);
    case ompt_callback_mutex_acquired: return cb(mutex<ompt_callback_mutex_acquired>);
    case ompt_callback_nest_lock: return cb(nest_lock);
    case ompt_callback_flush: return cb(flush);
    case ompt_callback_cancel: return cb(cancel);
    case ompt_callback_reduction: return cb(sync<ompt_callback_reduction>);
    case ompt_callback_dispatch: return cb(dispatch);
    case ompt_callback_target_emi: return cb(target_emi);
    case ompt_callback_target_data_op_emi: return cb(target_data_op_emi);
    case ompt_callback_target_submit_emi: return cb(target_submit_emi);
    case ompt_callback_target_map_emi: return cb(target_map_emi);
    case ompt_callback_error: return cb(error);
    default: return nullptr;
  }
}

bool keeps_words(int event) {
  switch (event) {
    case ompt_callback_parallel_begin:
    case ompt_callback_parallel_end:
    case ompt_callback_implicit_task:
    case ompt_callback_task_create:
    case ompt_callback_task_schedule:
    case ompt_callback_target_emi: return true;
    default: return false;
  }
}

}  // namespace kob::omp::chain
