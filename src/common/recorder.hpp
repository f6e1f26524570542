// Per-thread chunked record buffers. The owning thread appends without locks; a lock is taken
// only when a thread registers. Chunks are read once, at the end of the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "common/clock.hpp"
#include "common/intern.hpp"
#include "common/record.hpp"

#define KOB_LIKELY(x) __builtin_expect(!!(x), 1)
#define KOB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KOB_HOT_INLINE inline __attribute__((always_inline))

namespace kob {

struct Chunk {
  static constexpr std::size_t kRecords = 2048;  // 128 KiB
  Record recs[kRecords];
  Chunk* next = nullptr;
};

// What a thread is doing in Kokkos right now, so that OpenMP events it causes can name it.
struct KokkosContext {
  static constexpr std::uint32_t kMaxDepth = 32;
  std::uint64_t kernels[kMaxDepth];  // open kernels and fences, innermost last
  std::uint32_t kernel_depth = 0;
  std::uint64_t deep_copies[kMaxDepth];
  std::uint32_t deep_copy_depth = 0;

  std::uint64_t kernel() const { return kernel_depth ? kernels[kernel_depth - 1] : 0; }
  std::uint64_t deep_copy() const { return deep_copy_depth ? deep_copies[deep_copy_depth - 1] : 0; }
};

// The Kokkos kernel an OpenMP thread works for: pushed by implicit tasks and explicit tasks
// that start on this thread, taken from the ompt_data_t of the region or task.
struct OmpContext {
  static constexpr std::uint32_t kMaxDepth = 32;
  std::uint64_t kernels[kMaxDepth];
  std::uint64_t tasks[kMaxDepth];  // our explicit-task id of each level, 0 for an implicit task
  std::uint32_t depth = 0;

  std::uint64_t kernel() const {
    return depth == 0 ? 0 : kernels[(depth <= kMaxDepth ? depth : kMaxDepth) - 1];
  }
  void push(std::uint64_t k, std::uint64_t task = 0) {
    if (depth < kMaxDepth) {
      kernels[depth] = k;
      tasks[depth] = task;
    }
    ++depth;
  }
  void pop() {
    if (depth > 0) --depth;
  }
  // Leaves an explicit task only if it is the one on top: libomp also names as prior a task
  // that never started on this thread (a discarded task, an untied task's next part).
  void pop_task(std::uint64_t task) {
    if (depth > kMaxDepth || (depth > 0 && tasks[depth - 1] == task)) --depth;
  }
};

// Target regions open on this thread, innermost last (target callbacks): what a region's end and
// the 5.0 data op and submit callbacks cannot get from the runtime (the deep copy a region
// belongs to; our id for the runtime's target id).
struct OmpTargetContext {
  struct Open {
    std::uint64_t runtime_id = 0;  // the runtime's target id (5.0 callbacks), 0 with EMI
    std::uint64_t id = 0;          // ours (EMI) or the runtime's
    std::uint64_t kernel = 0;
    std::uint64_t deep_copy = 0;
  };
  static constexpr std::uint32_t kMaxDepth = 8;
  Open open[kMaxDepth];
  std::uint32_t depth = 0;

  void push(const Open& t) {
    if (depth < kMaxDepth) open[depth] = t;
    ++depth;
  }
  // Drops the entry with this id (and what was opened after it); returns it, or nullptr. The
  // entry stays readable until the next push.
  const Open* pop(std::uint64_t id) {
    for (std::uint32_t d = depth < kMaxDepth ? depth : kMaxDepth; d-- > 0;) {
      if (open[d].id == id) {
        depth = d;
        return &open[d];
      }
    }
    return nullptr;
  }
  const Open* find_runtime(std::uint64_t runtime_id) const {
    for (std::uint32_t d = depth < kMaxDepth ? depth : kMaxDepth; d-- > 0;)
      if (open[d].runtime_id == runtime_id) return &open[d];
    return nullptr;
  }
};

class ThreadBuffer {
 public:
  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;
  // The tool never destroys a registered buffer (they are read at exit); tests do.
  ~ThreadBuffer();

  // Appends one record; fill writes its fields (the tick first, so it is taken as late as
  // possible for begin events). Drops and counts the event when the memory cap is reached.
  template <class Fill>
  void emit(Fill&& fill) {
    Record* r = cur_.load(std::memory_order_relaxed);
    if (KOB_UNLIKELY(r == end_)) {
      r = grow();
      if (r == nullptr) return;
    }
    fill(*r);
    cur_.store(r + 1, std::memory_order_release);
  }

  InternCache names;
  KokkosContext kokkos;
  OmpContext omp;
  OmpTargetContext omp_target;

  // The Kokkos kernel that events of this thread belong to: its own open kernel, else the one
  // its OpenMP implicit or explicit task works for.
  std::uint64_t current_kernel() const {
    const std::uint64_t k = kokkos.kernel();
    return k != 0 ? k : omp.kernel();
  }

  // Identity of the track, fixed at registration.
  std::uint32_t index = 0;   // registration order, 0 = first thread seen
  std::uint64_t os_tid = 0;
  // Set by OMPT thread_begin: 0 unknown, else ompt_thread_t (1 initial, 2 worker, 3 other).
  std::atomic<int> omp_thread_type{0};
  // The processor the thread ran on at OMPT thread_begin (sched_getcpu), and the OpenMP place
  // holding that processor (filled in before the write); -1 unknown. Atomic: written by the
  // thread, read by the writer at the end.
  std::atomic<int> omp_proc{-1};
  std::atomic<int> omp_place{-1};

  // Reader side (end of run): calls f(const Record&) for every committed record, in order.
  template <class F>
  void for_each(F&& f) const {
    const Record* stop = cur_.load(std::memory_order_acquire);
    if (stop == nullptr) return;  // first chunk not published yet
    for (const Chunk* c = first_; c != nullptr; c = c->next) {
      const bool last = stop >= c->recs && stop <= c->recs + Chunk::kRecords;
      const Record* e = last ? stop : c->recs + Chunk::kRecords;
      for (const Record* r = c->recs; r != e; ++r) f(*r);
      if (last) break;
    }
  }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::size_t record_count() const;

 private:
  Record* grow();

  std::atomic<Record*> cur_{nullptr};
  Record* end_ = nullptr;
  Chunk* first_ = nullptr;
  Chunk* last_ = nullptr;
  std::atomic<std::uint64_t> dropped_{0};
};

// constinit: no TLS init-function check on every access.
extern constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec")));

ThreadBuffer* register_thread();

inline ThreadBuffer& this_thread() {
  ThreadBuffer* b = t_buffer;
  if (KOB_UNLIKELY(b == nullptr)) b = register_thread();
  return *b;
}

// Process-wide counters for the ids handed to Kokkos and written into the trace.
struct IdCounters {
  std::atomic<std::uint64_t> kernel{0};
  std::atomic<std::uint64_t> fence{0};
  std::atomic<std::uint64_t> deep_copy{0};
  std::atomic<std::uint32_t> section{0};
  std::atomic<std::uint64_t> alloc{0};
  std::atomic<std::uint64_t> parallel{0};
  std::atomic<std::uint64_t> task{0};
  std::atomic<std::uint64_t> target{0};   // target regions (EMI target_data)
  std::atomic<std::uint64_t> host_op{0};  // target data ops and submits (EMI host_op_id)
};
extern IdCounters g_ids;

namespace recorder {
// Memory cap for all chunks together; set from the configuration before recording starts.
void set_memory_limit(std::uint64_t bytes);
std::uint64_t memory_used();
// After close(), no chunk is allocated any more: events are discarded without being counted.
void close();
bool closed();
// The registered threads, in registration order.
std::vector<ThreadBuffer*> threads();
std::uint64_t dropped_total();
// Tests only: forget all threads and counters, deleting their buffers (no thread may still use one).
void reset_for_test();

// fork(): before_fork takes the registry lock so that no other thread holds it at the fork;
// after_fork_parent releases it. after_fork_child releases it too and forgets every buffer
// copied from the parent (the child records its own events only, into a fresh buffer for its one
// thread, which keeps what that thread was doing in Kokkos) and the memory they count.
void before_fork();
void after_fork_parent();
void after_fork_child();
}  // namespace recorder

}  // namespace kob
