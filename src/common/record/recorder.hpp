// Per-thread record buffers: each registered thread records into a small fixed ring of slots that
// are shared mappings of the raw trace (raw_trace.hpp); the writer thread (raw_writer.hpp) copies
// full slots to the file and hands them back. The owning thread appends without locks or system
// calls; registration and moving to the next slot are the slow paths.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/record/raw_format.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/record.hpp"
#include "common/support/hot_path.hpp"

namespace kob {

class ThreadBuffer;
namespace recorder {
void after_fork_child();
void release_file_rings();
}

// What a thread is doing in Kokkos right now, so that OpenMP events it causes can name it.
// Each depth before its stack: an event reads the depth and the top in one cache line (the
// kernel's data evicts ours between a region's events).
struct alignas(64) KokkosContext {
  static constexpr std::uint32_t kMaxDepth = 32;
  std::uint32_t kernel_depth = 0;
  std::uint64_t kernels[kMaxDepth];  // open kernels and fences, innermost last
  std::uint32_t deep_copy_depth = 0;
  std::uint64_t deep_copies[kMaxDepth];

  std::uint64_t kernel() const { return kernel_depth ? kernels[kernel_depth - 1] : 0; }
  std::uint64_t deep_copy() const { return deep_copy_depth ? deep_copies[deep_copy_depth - 1] : 0; }
};

// The ids a Kokkos tool run beside this library (kokkos_hooks/kokkos_chain) gave this thread's
// open kernels and fences: Kokkos holds ours, the child gets its own back at the end. Only touched
// when a child runs.
struct ChainIds {
  static constexpr std::uint32_t kMaxDepth = 64;
  std::uint32_t depth = 0;
  std::uint64_t ours[kMaxDepth];    // the id Kokkos holds (a fence's with bit 62 flipped)
  std::uint64_t theirs[kMaxDepth];  // the child's id for it
};

// The Kokkos kernel an OpenMP thread works for: pushed by implicit tasks and explicit tasks
// that start on this thread, taken from the ompt_data_t of the region or task.
struct alignas(64) OmpContext {
  static constexpr std::uint32_t kMaxDepth = 32;
  std::uint32_t depth = 0;
  std::uint64_t kernels[kMaxDepth];
  std::uint64_t tasks[kMaxDepth];  // our explicit-task id of each level, 0 for an implicit task

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

// The sync region being folded into one record on this thread (common/record/record_fold.hpp):
// its record while it is the thread's last one, the step it has reached and that step's tick.
struct SyncFold {
  static constexpr std::uint8_t kNone = 0, kBegun = 1, kWaiting = 2, kWaited = 3;
  Record* rec = nullptr;
  std::uint64_t seq = 0;  // the slot's chunk number when rec was written
  std::uint64_t tick = 0;
  std::uint16_t kind = 0;
  std::uint8_t stage = kNone;
};

class ThreadBuffer {
  // What every event reads or writes besides its record, first and in one cache line: between a
  // region's events the kernel's data evicts ours, and each line is a miss (the cursor and the end
  // of the slot being filled, equal (null) before the first slot and while no slot is free so
  // that the event takes the slow path; the chunk number of that slot).
  alignas(64) std::atomic<Record*> pos_{nullptr};
  Record* end_ = nullptr;
  std::uint64_t seq_ = 0;

 public:
  SyncFold sync_fold;
  // Ring slots of a registered thread: at most this many; recorder::set_ring_slots picks how many.
  static constexpr std::uint32_t kMaxRing = 16;

  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;
  // The tool never destroys a registered buffer (the writer and the exit read them); tests do.
  ~ThreadBuffer();

  // The thread ends (its pthread key destructor, which runs after its C++ thread_local
  // destructors): its slot being filled goes to the writer as final, and once the writer has
  // copied every slot of it, the ring goes to a pool that later threads take their slots from.
  // Only a ring in the raw trace is handed back (without a file the ring holds the only copy of
  // what the thread recorded last). An event after this (a later destructor, libomp's own end of
  // a root thread) takes the ring back, or a pooled or fresh one, and arms the end again.
  void retire();

  // Appends one record; fill writes its fields (the tick first, so it is taken as late as
  // possible for begin events). Steady state: the record and the cursor, nothing else (the cursor
  // is atomic only so that the writer thread can read it; a plain store on x86). When the slot is
  // full the slow path moves to the next slot of the ring, copying the thread's full slots to the
  // file itself first when the writer has not yet (next_slot). The slot's `committed` count in the file is published by
  // the writer from this cursor, and set exactly when the slot is handed over; a reader of a file
  // cut short takes the records past it that are complete (slots are zeroed before reuse).
  template <class Fill>
  void emit(Fill&& fill) {
    emit_open(fill);
  }

  // Like emit; returns the record written (null when the event was dropped), which a later event
  // may complete in place as long as still_last says it is the thread's last record.
  template <class Fill>
  KOB_HOT_INLINE Record* emit_open(Fill&& fill) {
    Record* r = pos_.load(std::memory_order_relaxed);
    if (KOB_UNLIKELY(r == end_)) {
      if (!next_slot()) {
        dropped_event();
        return nullptr;
      }
      r = pos_.load(std::memory_order_relaxed);
    }
    fill(*r);
    pos_.store(r + 1, std::memory_order_release);
    return r;
  }
  // The chunk number of the slot being filled: with the record's address, what tells a record
  // still last from a later one at the same place in the slot's next use.
  std::uint64_t slot_seq() const { return seq_; }
  bool still_last(const Record* r, std::uint64_t seq) const {
    return r != nullptr && pos_.load(std::memory_order_relaxed) == r + 1 && seq_ == seq;
  }

  // Records in the slot or chunk whose records start at recs: up to the cursor when the thread
  // writes there now, else the slot's committed count (exact once the slot was handed over).
  std::uint32_t filled(const raw::SlotHead& head, const Record* recs, std::uint32_t capacity) const {
    const Record* p = pos_.load(std::memory_order_acquire);
    if (p >= recs && p <= recs + capacity) return static_cast<std::uint32_t>(p - recs);
    return head.committed.load(std::memory_order_acquire);
  }

  InternCache names;
  KokkosContext kokkos;
  OmpContext omp;
  OmpTargetContext omp_target;
  ChainIds chain;

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
  // thread, read by the writer.
  std::atomic<int> omp_proc{-1};
  std::atomic<int> omp_place{-1};

  // Calls f(const Record&) for every committed record still in memory, in order: what the exit
  // path reads when there is no raw trace (it could not be made), i.e. what the thread recorded
  // since its slots were last copied (their copies had nowhere to go).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [committed, recs, seq] : in_memory())
      for (std::uint32_t i = 0; i < committed; ++i) f(recs[i]);
  }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Times the thread copied its own slots because the writer was behind, and their ticks in all.
  std::uint64_t flushes() const { return flushes_; }
  std::uint64_t flush_ticks() const { return flush_ticks_; }
  std::size_t record_count() const;

  // ---- the writer's side (raw_writer.cpp) ----
  std::uint32_t ring_size() const { return ring_size_.load(std::memory_order_acquire); }
  raw::Slot* ring_slot(std::uint32_t i) const { return ring_[i]; }
  // The same without the copy lock (the writer's look for work): a thread's ring may be pooled
  // and set up again meanwhile, so the slot pointers are written and read atomically.
  raw::Slot* ring_slot_unlocked(std::uint32_t i) const {
    return std::atomic_ref<raw::Slot*>(const_cast<raw::Slot*&>(ring_[i])).load(std::memory_order_relaxed);
  }
  bool file_backed() const { return file_backed_; }
  // Records the writer copied or dropped: it counts those it could not write here.
  void add_dropped(std::uint64_t n) { dropped_.fetch_add(n, std::memory_order_relaxed); }
  // After a copy (under the writer's copy lock): a retired thread whose slots are all copied
  // gives its ring to the pool; its ring_size() is 0 from then on. True when it did.
  bool reclaim_ring();
  bool retired() const { return life_.load(std::memory_order_acquire) == kRetired; }
  std::uint64_t next_write_seq = 1;  // the writer's: the chunk it copies next
  int written_type = 0, written_proc = -1, written_place = -1;  // the writer's: in the last THREAD entry
  bool registered = false;
  // The run of events being dropped now because no slot is free (finish writes it as LOST).
  bool open_lost(std::uint64_t& first, std::uint64_t& last, std::uint64_t& n) const {
    n = lost_n_.load(std::memory_order_relaxed);
    first = lost_first_.load(std::memory_order_relaxed);
    last = lost_last_.load(std::memory_order_relaxed);
    return n != 0;
  }

 private:
  friend KOB_SLOW_PATH ThreadBuffer* register_thread();
  friend void recorder::after_fork_child();
  friend void recorder::release_file_rings();
  KOB_SLOW_PATH bool next_slot();
  bool setup_ring();  // under the registry lock
  bool take_pooled_ring(std::uint32_t fresh);
  bool revive();
  struct InMemory {
    std::uint32_t committed;
    const Record* recs;
    std::uint64_t seq;
  };
  std::vector<InMemory> in_memory() const;
  // Counts an event that found no slot; the lost span's ticks are read now (it was made now).
  KOB_SLOW_PATH void dropped_event();

  raw::Slot* cur_ = nullptr;  // the slot being filled (its records end at end_)
  std::uint32_t cur_index_ = 0;
  raw::Slot* ring_[kMaxRing] = {};
  // Atomic: a thread that records again after its ring went to the pool sets up a new one while
  // the writer reads the size (0 until the new slots are in ring_).
  std::atomic<std::uint32_t> ring_size_{0};
  // kLive, kRetired (the thread ended; the writer may take the ring once all of it is copied),
  // kReclaimed (the ring is in the pool). Changes away from kRetired under the registry lock.
  static constexpr std::uint32_t kLive = 0, kRetired = 1, kReclaimed = 2;
  std::atomic<std::uint32_t> life_{kLive};
  bool ring_tried_ = false;
  bool file_backed_ = false;
  bool count_drops_ = true;  // false once the recorder is closed: late events are not counted
  bool flushing_ = false;    // copying its own slots now (an event of a signal handler meanwhile drops)
  // The current run of events dropped because no slot was free (a LOST entry when it ends).
  // Atomic only because finish() may read them while the thread still runs.
  std::atomic<std::uint64_t> lost_first_{0}, lost_last_{0}, lost_n_{0};
  bool cur_full_ = false;     // cur_ was marked full and handed over
  std::atomic<std::uint64_t> dropped_{0};
  std::uint64_t flushes_ = 0, flush_ticks_ = 0;
};

// constinit: no TLS init-function check on every access.
extern constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec")));

KOB_SLOW_PATH ThreadBuffer* register_thread();

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
// Memory cap for the slots of all threads together; set from the configuration before recording
// starts. A thread gets kDefaultRing slots, fewer (at least 2) when the cap leaves less, or none
// (it records nothing, its events counted as dropped).
void set_memory_limit(std::uint64_t bytes);
std::uint64_t memory_used();
// Called on each thread right after it first registers (not a hot path), so that the session can
// give it what its crash handling needs (an alternate signal stack) without the recorder knowing
// the session. Null: nothing. Set once at start, before the program's threads record.
void set_new_thread_hook(void (*hook)());
inline constexpr std::uint32_t kDefaultRing = 4;
// Rings of ended threads waiting in the pool for a later thread (their memory stays counted).
std::uint32_t pooled_rings();
// Slots per thread for threads that register from now on (tests; 2 to ThreadBuffer::kMaxRing).
void set_ring_slots(std::uint32_t n);
// Tests of the writer's own chunking: false makes a thread whose next slot is still full wait for the
// writer instead of copying its own slots (every chunk then holds only its own records). Default true.
void set_self_flush_for_test(bool on);
// After close(), no slot is taken any more: events past the current slot are discarded without
// being counted.
void close();
bool closed();
// The registered threads, in registration order.
std::vector<ThreadBuffer*> threads();
std::uint64_t dropped_total();
// Tests only: forget all threads and counters, deleting their buffers (no thread may still use one).
void reset_for_test();

// fork(): before_fork takes the registry lock so that no other thread holds it at the fork;
// after_fork_parent releases it. after_fork_child releases it too and forgets every buffer
// copied from the parent, unmapping their slots (the child records its own events only, into a
// fresh buffer with fresh anonymous slots for its one thread, which keeps what that thread was
// doing in Kokkos) and the memory they count.
void before_fork();
void after_fork_parent();
void after_fork_child();
// Once the raw trace is complete (raw::finish): the pages of every ring mapped in the file are
// let go (madvise MADV_DONTNEED), so that the conversion at exit does not add its memory to the
// rings'. The mappings stay and keep their content (the file's): a thread that still records
// faults its page back in. Anonymous rings (no file) are left alone.
void release_file_rings();
}  // namespace recorder

}  // namespace kob
