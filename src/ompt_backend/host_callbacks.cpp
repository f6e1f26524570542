// Host OpenMP callbacks. Each one: check its group, read the tick, append one record (a sync
// region's wait and end complete its begin's record instead, when they can: sync_step). The
// Kokkos kernel an event belongs to travels in the runtime's ompt_data_t (omp_ids.hpp).
#include <omp-tools.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <string_view>

#include "common/session/config.hpp"
#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"
#include "common/record/record_fold.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"
#include "ompt_backend/callback_table.hpp"
#include "ompt_backend/ompt_runtime.hpp"
#include "ompt_backend/omp_ids.hpp"

namespace kob::omp {

namespace {

inline std::uint64_t addr(const void* codeptr) { return reinterpret_cast<std::uintptr_t>(codeptr); }

inline std::uint64_t kernel_or(const ThreadBuffer& b, const ompt_data_t* task) {
  const std::uint64_t k = b.current_kernel();
  return k != 0 ? k : kernel_of(task);
}

// No runtime inquiry here: in a fork() child, libomp calls this from its atfork handler while it
// holds its initialisation lock, and ompt_get_place_num would wait on that lock for ever.
// sched_getcpu is what ompt_get_proc_id answers, without the runtime (a vDSO call); the place
// holding that processor is looked up at the end (ompt_start.cpp, before_write).
void on_thread_begin(ompt_thread_t type, ompt_data_t* /*thread_data*/) {
  session::after_fork_check();
  ThreadBuffer& b = this_thread();
  b.omp_thread_type.store(static_cast<int>(type), std::memory_order_relaxed);
  b.omp_proc.store(sched_getcpu(), std::memory_order_relaxed);
  const std::uint64_t t = clock::now();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpThreadBegin;
    fields::OmpThread::thread_type.set(r, static_cast<std::uint16_t>(type));
  });
}

void on_thread_end(ompt_data_t* /*thread_data*/) {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpThreadEnd;
  });
}

void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* /*frame*/, ompt_data_t* parallel_data,
                       unsigned int requested, int flags, const void* codeptr) {
  using F = fields::OmpParallel;
  ThreadBuffer& b = this_thread();
  const std::uint64_t kernel = kernel_or(b, encountering_task);
  const std::uint64_t id = g_ids.parallel.fetch_add(1, std::memory_order_relaxed) + 1;
  if (parallel_data) parallel_data->value = pack(kernel, id);
  if (!recording(kGroupOmpParallel)) return;
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpParallelBegin;
    F::requested_team_size.set(r, requested);
    F::parallel_id.set(r, id & kIdMask);
    F::kernel.set(r, kernel);
    F::flags.set(r, static_cast<std::uint32_t>(flags));
    F::codeptr.set(r, addr(codeptr));
  });
}

void on_parallel_end(ompt_data_t* parallel_data, ompt_data_t* /*encountering_task*/, int flags, const void* /*codeptr*/) {
  using F = fields::OmpParallel;
  if (!recording(kGroupOmpParallel)) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpParallelEnd;
    F::parallel_id.set(r, id_of(parallel_data));
    F::kernel.set(r, kernel_of(parallel_data));
    F::flags.set(r, static_cast<std::uint32_t>(flags));
  });
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
                      unsigned int actual_parallelism, unsigned int index, int flags) {
  using F = fields::OmpImplicitTask;
  ThreadBuffer& b = this_thread();
  if (endpoint == ompt_scope_begin) {
    std::uint64_t kernel = kernel_of(parallel_data);
    std::uint64_t id = id_of(parallel_data);
    if (id == 0) {  // the initial task's implicit parallel region never had a parallel_begin
      id = g_ids.parallel.fetch_add(1, std::memory_order_relaxed) + 1;
      if (parallel_data) parallel_data->value = pack(kernel, id);
    }
    if (task_data) task_data->value = pack(kernel, id);
    b.omp.push(kernel);
    if (!recording(kGroupOmpParallel)) return;
    b.emit([&](Record& r) {
      r.tick = clock::now();
      r.type = Ev::OmpImplicitTaskBegin;
      F::flags.set(r, static_cast<std::uint16_t>(flags & 0xffff));
      F::thread_num.set(r, index);
      F::parallel_id.set(r, id & kIdMask);
      F::kernel.set(r, kernel);
      F::team_size.set(r, actual_parallelism);
    });
  } else {
    const std::uint64_t t = clock::now();
    b.omp.pop();
    if (!recording(kGroupOmpParallel)) return;
    b.emit([&](Record& r) {
      r.tick = t;
      r.type = Ev::OmpImplicitTaskEnd;
      F::flags.set(r, static_cast<std::uint16_t>(flags & 0xffff));
      F::thread_num.set(r, index);
      F::parallel_id.set(r, id_of(task_data));
      F::kernel.set(r, kernel_of(task_data));
    });
  }
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
             std::uint64_t count, const void* codeptr) {
  using F = fields::OmpWork;
  if (!recording(kGroupOmpWork)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  const bool begin = endpoint == ompt_scope_begin;
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = begin ? Ev::OmpWorkBegin : Ev::OmpWorkEnd;
    F::work_type.set(r, static_cast<std::uint16_t>(type));
    F::parallel_id.set(r, id_of(parallel_data));
    F::kernel.set(r, kernel_or(b, task_data));
    F::count.set(r, count);
    // The end's would repeat the begin's: left 0, it costs the coder nothing.
    F::codeptr.set(r, begin ? addr(codeptr) : 0);
  });
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr) {
  using F = fields::OmpMasked;
  if (!recording(kGroupOmpWork)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  const bool begin = endpoint == ompt_scope_begin;
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = begin ? Ev::OmpMaskedBegin : Ev::OmpMaskedEnd;
    F::parallel_id.set(r, id_of(parallel_data));
    F::kernel.set(r, kernel_or(b, task_data));
    F::codeptr.set(r, begin ? addr(codeptr) : 0);
  });
}

void on_dispatch(ompt_data_t* parallel_data, ompt_data_t* task_data, ompt_dispatch_t kind, ompt_data_t instance) {
  using F = fields::OmpDispatch;
  if (!recording(kGroupOmpWork)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpDispatch;
    F::kind.set(r, static_cast<std::uint16_t>(kind));
    F::parallel_id.set(r, id_of(parallel_data));
    F::kernel.set(r, kernel_or(b, task_data));
    F::instance.set(r, instance.value);
  });
}

// The fields of every sync region record (begin, wait, end).
inline void fill_sync(Record& r, const ThreadBuffer& b, std::uint64_t t, Ev type, ompt_sync_region_t kind,
                      ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr) {
  r.tick = t;
  r.type = type;
  using F = fields::OmpSync;
  F::kind.set(r, static_cast<std::uint16_t>(kind));
  F::task_id.set(r, static_cast<std::uint32_t>(task_id_of(task_data)));  // below 2^31 (omp_ids.hpp)
  F::parallel_id.set(r, id_of(parallel_data));
  F::kernel.set(r, kernel_or(b, task_data));
  F::codeptr.set(r, addr(codeptr));
}

// A sync region's begin writes its record; its wait and end complete that record in place
// (common/record/record_fold.hpp) when it is still this thread's last record and the step is the
// expected one, else they write records of their own as before.
void sync_begin(ompt_sync_region_t kind, ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr) {
  if (!recording(kGroupOmpSync)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  SyncFold& f = b.sync_fold;
  f.rec = b.emit_open([&](Record& r) { fill_sync(r, b, t, Ev::OmpSyncBegin, kind, parallel_data, task_data, codeptr); });
  f.seq = b.slot_seq();
  f.tick = t;
  f.kind = static_cast<std::uint16_t>(kind);
  f.stage = SyncFold::kBegun;
}

// Completes the folded record with the step `field` (one of fields::OmpSync's steps) when it can;
// false when the step needs a record of its own.
template <class StepField>
inline bool fold_step(ThreadBuffer& b, ompt_sync_region_t kind, std::uint8_t from, std::uint8_t to, StepField field,
                      std::uint64_t t) {
  SyncFold& f = b.sync_fold;
  const bool fits = f.stage == from && f.kind == kind && b.still_last(f.rec, f.seq);
  if (KOB_UNLIKELY(!fits)) {
    f.stage = SyncFold::kNone;
    return false;
  }
  // Relaxed atomic: the record is already published (the writer's final copy may read it).
  std::atomic_ref<std::uint64_t>(field.slot(*f.rec)).store(fold::step(t, f.tick), std::memory_order_relaxed);
  f.tick = t;
  f.stage = to;
  return true;
}

// The wait and end records leave the code address out: the begin's names the construct.
void sync_step(Ev type, ompt_sync_region_t kind, ompt_data_t* parallel_data, ompt_data_t* task_data) {
  if (!recording(kGroupOmpSync)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  bool folded;
  if (type == Ev::OmpSyncWaitBegin)
    folded = fold_step(b, kind, SyncFold::kBegun, SyncFold::kWaiting, fields::OmpSync::wait_begin_step, t);
  else if (type == Ev::OmpSyncWaitEnd)
    folded = fold_step(b, kind, SyncFold::kWaiting, SyncFold::kWaited, fields::OmpSync::wait_end_step, t);
  else  // the end: after the wait, or straight after the begin (a region without a wait)
    folded = fold_step(b, kind, b.sync_fold.stage == SyncFold::kBegun ? SyncFold::kBegun : SyncFold::kWaited,
                       SyncFold::kNone, fields::OmpSync::end_step, t);
  if (folded) return;
  b.emit([&](Record& r) { fill_sync(r, b, t, type, kind, parallel_data, task_data, nullptr); });
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                    ompt_data_t* task_data, const void* codeptr) {
  if (endpoint == ompt_scope_begin)
    sync_begin(kind, parallel_data, task_data, codeptr);
  else
    sync_step(Ev::OmpSyncEnd, kind, parallel_data, task_data);
}

void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                         ompt_data_t* task_data, const void* /*codeptr*/) {
  sync_step(endpoint == ompt_scope_begin ? Ev::OmpSyncWaitBegin : Ev::OmpSyncWaitEnd, kind, parallel_data, task_data);
}

void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t* /*frame*/, ompt_data_t* new_task, int flags,
                    int has_dependences, const void* codeptr) {
  using F = fields::OmpTaskCreate;
  ThreadBuffer& b = this_thread();
  const std::uint64_t kernel = kernel_or(b, encountering_task);
  const std::uint64_t id = (g_ids.task.fetch_add(1, std::memory_order_relaxed) + 1) & kIdMask;
  if (new_task) new_task->value = pack_task(kernel, id);
  if (!recording(kGroupOmpTask)) return;
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpTaskCreate;
    F::has_dependences.set(r, has_dependences != 0);
    F::flags.set(r, static_cast<std::uint32_t>(flags));
    F::task_id.set(r, id);
    F::kernel.set(r, kernel);
    F::codeptr.set(r, addr(codeptr));
  });
}

void on_task_schedule(ompt_data_t* prior_task, ompt_task_status_t prior_status, ompt_data_t* next_task) {
  using F = fields::OmpTaskSchedule;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  const std::uint64_t prior = task_id_of(prior_task), next = task_id_of(next_task);
  // A finished or suspended explicit task stops lending its kernel to this thread; the next
  // explicit task lends its own. A fulfill (early: from inside the still running body; late:
  // from any thread) and a taskwait-depend task's completion leave no thread.
  const bool leaves = prior_status != ompt_task_early_fulfill && prior_status != ompt_task_late_fulfill &&
                      prior_status != ompt_taskwait_complete;
  if (prior != 0 && leaves) b.omp.pop_task(prior);
  if (next != 0) b.omp.push(kernel_of(next_task), next);
  if (!recording(kGroupOmpTask)) return;
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpTaskSchedule;
    F::prior_status.set(r, static_cast<std::uint32_t>(prior_status));
    F::prior_task_id.set(r, prior);
    F::next_kernel.set(r, kernel_of(next_task));
    F::next_task_id.set(r, next);
  });
}

void on_dependences(ompt_data_t* task, const ompt_dependence_t* /*deps*/, int ndeps) {
  if (!recording(kGroupOmpTask)) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpDependences;
    fields::OmpDependences::count.set(r, static_cast<std::uint32_t>(ndeps));
    fields::OmpDependences::task_id.set(r, task_id_of(task));
  });
}

void on_task_dependence(ompt_data_t* src, ompt_data_t* sink) {
  if (!recording(kGroupOmpTask)) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpTaskDependence;
    fields::OmpTaskDependence::src_task_id.set(r, task_id_of(src));
    fields::OmpTaskDependence::sink_task_id.set(r, task_id_of(sink));
  });
}

inline void mutex_event(Ev type, ompt_mutex_t kind, ompt_wait_id_t wait_id, std::uint32_t impl = 0, std::uint64_t hint = 0,
                        const void* codeptr = nullptr) {
  using F = fields::OmpMutex;
  if (!recording(kGroupOmpMutex)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = type;
    F::kind.set(r, static_cast<std::uint16_t>(kind));
    F::implementation.set(r, impl);
    F::wait_id.set(r, wait_id);
    F::kernel.set(r, b.current_kernel());
    F::hint.set(r, hint);
    F::codeptr.set(r, addr(codeptr));
  });
}

void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id, const void* codeptr) {
  mutex_event(Ev::OmpMutexAcquire, kind, wait_id, impl, hint, codeptr);
}
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* /*codeptr*/) {
  mutex_event(Ev::OmpMutexAcquired, kind, wait_id);
}
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* /*codeptr*/) {
  mutex_event(Ev::OmpMutexReleased, kind, wait_id);
}
void on_lock_init(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id, const void* codeptr) {
  mutex_event(Ev::OmpLockInit, kind, wait_id, impl, hint, codeptr);
}
void on_lock_destroy(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr) {
  mutex_event(Ev::OmpLockDestroy, kind, wait_id, 0, 0, codeptr);
}
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* /*codeptr*/) {
  using F = fields::OmpNestLock;
  if (!recording(kGroupOmpMutex)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpNestLock;
    F::endpoint.set(r, static_cast<std::uint16_t>(endpoint));
    F::wait_id.set(r, wait_id);
    F::kernel.set(r, b.current_kernel());
  });
}

void on_cancel(ompt_data_t* task_data, int flags, const void* codeptr) {
  using F = fields::OmpCancel;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpCancel;
    F::flags.set(r, static_cast<std::uint32_t>(flags));
    F::kernel.set(r, kernel_or(b, task_data));
    F::codeptr.set(r, addr(codeptr));
  });
}

void on_flush(ompt_data_t* /*thread_data*/, const void* codeptr) {
  if (!recording(kGroupOmpSync)) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpFlush;
    fields::OmpFlush::kernel.set(r, b.current_kernel());
    fields::OmpFlush::codeptr.set(r, addr(codeptr));
  });
}

int on_control_tool(std::uint64_t command, std::uint64_t modifier, void* /*arg*/, const void* codeptr) {
  using F = fields::OmpControlTool;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpControlTool;
    F::command.set(r, static_cast<std::uint32_t>(command));
    F::modifier.set(r, modifier);
    F::codeptr.set(r, addr(codeptr));
  });
  return 0;
}

// The error directive (OpenMP 5.1, at(execution)). Rare: the message is interned here, under the
// table's lock, since the runtime may hand a buffer it reuses. A null message is kept as null.
void on_error(ompt_severity_t severity, const char* message, std::size_t length, const void* codeptr) {
  using F = fields::OmpError;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  constexpr std::size_t kMaxMessage = 4096;
  std::uint32_t text = InternTable::kNullName;
  if (message != nullptr) {
    try {
      text = names().intern(std::string_view(message, strnlen(message, length < kMaxMessage ? length : kMaxMessage)));
    } catch (...) {  // out of memory: the event stays, without its text
    }
  }
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::OmpError;
    F::severity.set(r, static_cast<std::uint16_t>(severity));
    F::message.set(r, text);
    F::kernel.set(r, b.current_kernel());
    F::message_length.set(r, length);
    F::codeptr.set(r, addr(codeptr));
  });
  // severity(fatal): the runtime ends the program as soon as we return (libomp 19: abort(), no
  // exit handler runs), so this is the last moment to write the files.
  if (severity == ompt_fatal) {
    try {
      session::write_outputs();
    } catch (...) {
    }
  }
}

template <class F>
ompt_callback_t cb(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

constexpr std::uint32_t kAnyOmp = kGroupAllOmp;

}  // namespace

std::span<const CallbackEntry> host_callbacks() {
  // Parallel and task begin callbacks carry the Kokkos kernel to worker threads, so they are
  // registered whenever any OpenMP group is recorded; what they record is filtered inside.
  static const CallbackEntry kTable[] = {
      {ompt_callback_thread_begin, "thread_begin", cb(on_thread_begin), kAnyOmp},
      {ompt_callback_thread_end, "thread_end", cb(on_thread_end), kAnyOmp},
      {ompt_callback_parallel_begin, "parallel_begin", cb(on_parallel_begin), kAnyOmp},
      {ompt_callback_parallel_end, "parallel_end", cb(on_parallel_end), kGroupOmpParallel},
      {ompt_callback_implicit_task, "implicit_task", cb(on_implicit_task), kAnyOmp},
      {ompt_callback_work, "work", cb(on_work), kGroupOmpWork},
      {ompt_callback_masked, "masked", cb(on_masked), kGroupOmpWork},
      {ompt_callback_dispatch, "dispatch", cb(on_dispatch), kGroupOmpWork},
      {ompt_callback_sync_region, "sync_region", cb(on_sync_region), kGroupOmpSync},
      {ompt_callback_sync_region_wait, "sync_region_wait", cb(on_sync_region_wait), kGroupOmpSync},
      {ompt_callback_reduction, "reduction", cb(on_sync_region), kGroupOmpSync},
      {ompt_callback_flush, "flush", cb(on_flush), kGroupOmpSync},
      {ompt_callback_task_create, "task_create", cb(on_task_create), kAnyOmp},
      {ompt_callback_task_schedule, "task_schedule", cb(on_task_schedule), kAnyOmp},
      {ompt_callback_dependences, "dependences", cb(on_dependences), kGroupOmpTask},
      {ompt_callback_task_dependence, "task_dependence", cb(on_task_dependence), kGroupOmpTask},
      {ompt_callback_mutex_acquire, "mutex_acquire", cb(on_mutex_acquire), kGroupOmpMutex},
      {ompt_callback_mutex_acquired, "mutex_acquired", cb(on_mutex_acquired), kGroupOmpMutex},
      {ompt_callback_mutex_released, "mutex_released", cb(on_mutex_released), kGroupOmpMutex},
      {ompt_callback_nest_lock, "nest_lock", cb(on_nest_lock), kGroupOmpMutex},
      {ompt_callback_lock_init, "lock_init", cb(on_lock_init), kGroupOmpMutex},
      {ompt_callback_lock_destroy, "lock_destroy", cb(on_lock_destroy), kGroupOmpMutex},
      {ompt_callback_cancel, "cancel", cb(on_cancel), kAnyOmp},
      {ompt_callback_control_tool, "control_tool", cb(on_control_tool), kAnyOmp},
      {ompt_callback_error, "error", cb(on_error), kAnyOmp},
  };
  return kTable;
}

}  // namespace kob::omp
