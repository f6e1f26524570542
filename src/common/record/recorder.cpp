#include "common/record/recorder.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <string>

#include "common/support/deferred_signal.hpp"
#include "common/support/log.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/raw_writer.hpp"
#include "common/record/record_fields.hpp"

namespace kob {

constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
IdCounters g_ids;

namespace {
// A ring given back by an ended thread: its slots, contiguous from base, all free and zeroed.
struct PooledRing {
  raw::Slot* base;
  std::uint32_t slots;
};
struct Registry {
  std::mutex mu;
  std::vector<ThreadBuffer*> threads;
  std::vector<PooledRing> pool;  // still mapped (in the raw trace) and counted in g_used
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: read during exit
  return *r;
}
std::atomic<std::uint64_t> g_limit{64ull << 20};
std::atomic<std::uint32_t> g_ring_slots{recorder::kDefaultRing};
std::atomic<void (*)()> g_new_thread_hook{nullptr};
std::atomic<bool> g_self_flush{true};  // false: tests of the writer's own chunking (set_self_flush_for_test)
std::atomic<std::uint64_t> g_used{0};
std::atomic<bool> g_closed{false};
std::atomic<std::uint32_t> g_retired{0};  // threads ended whose ring the writer has not taken yet

// The end of a thread: a pthread key destructor, because those run after the thread's C++
// thread_local destructors (events there are still in order before it) and for every thread,
// OpenMP or not. Re-armed when the thread records again: glibc then runs another round.
pthread_key_t g_end_key;
void on_thread_end(void* b) { static_cast<ThreadBuffer*>(b)->retire(); }
void arm_thread_end(ThreadBuffer* b) {
  static const bool ok = pthread_key_create(&g_end_key, on_thread_end) == 0;
  if (ok) pthread_setspecific(g_end_key, b);
}

// Slots a fresh ring could have under the cap now.
std::uint32_t fresh_room(std::uint32_t want) {
  const std::uint64_t used = g_used.load(std::memory_order_relaxed), limit = g_limit.load(std::memory_order_relaxed);
  const std::uint64_t room = used < limit ? (limit - used) / raw::kSlotBytes : 0;
  return room >= want ? want : room >= 2 ? static_cast<std::uint32_t>(room) : 0;
}

// A thread needs a ring while the cap is spent and ended threads' rings still wait for the writer
// (asleep, or busy with the file): it copies their last slots itself, which puts their rings in
// the pool. Without the registry lock (a copy takes it to pool a ring).
void help_reclaim() {
  if (g_retired.load(std::memory_order_relaxed) == 0 || g_closed.load(std::memory_order_relaxed) ||
      fresh_room(g_ring_slots.load(std::memory_order_relaxed)) == g_ring_slots.load(std::memory_order_relaxed))
    return;
  for (ThreadBuffer* b : recorder::threads())
    if (b->retired()) raw::writer::copy_thread(*b, false);
}
}  // namespace

ThreadBuffer* register_thread() {
  const deferred_signal::Scope no_term_signal;  // the registry's, the copy's and the file's locks
  help_reclaim();
  auto* b = new ThreadBuffer();
  b->os_tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  b->registered = true;
  Registry& r = registry();
  {
    // The ring is set up under the lock: the writer sees a thread only once its slots exist.
    std::lock_guard<std::mutex> lock(r.mu);
    b->index = static_cast<std::uint32_t>(r.threads.size());
    b->setup_ring();
    raw::note_thread(*b);
    r.threads.push_back(b);
  }
  t_buffer = b;
  arm_thread_end(b);
  if (void (*hook)() = g_new_thread_hook.load(std::memory_order_acquire)) hook();
  return b;
}

namespace {
void unmap_ring(raw::Slot* const* ring, std::uint32_t n) {
  if (n > 0) munmap(ring[0], std::size_t{n} * raw::kSlotBytes);
}
}  // namespace

ThreadBuffer::~ThreadBuffer() {
  unmap_ring(ring_, ring_size_.load(std::memory_order_relaxed));
}

// Slow path, once per thread: reserves the ring's memory under the cap, maps the slots (in the
// raw trace when there is one, else anonymous) and faults every page in.
bool ThreadBuffer::setup_ring() {
  ring_tried_ = true;
  if (g_closed.load(std::memory_order_relaxed)) return false;  // nothing more is recorded
  const std::uint32_t want = g_ring_slots.load(std::memory_order_relaxed);
  if (take_pooled_ring(fresh_room(want))) return true;
  std::uint32_t k = 0;
  std::uint64_t used = g_used.load(std::memory_order_relaxed);
  do {
    const std::uint64_t limit = g_limit.load(std::memory_order_relaxed);
    const std::uint64_t room = used < limit ? (limit - used) / raw::kSlotBytes : 0;
    k = room >= want ? want : room >= 2 ? static_cast<std::uint32_t>(room) : 0;
    if (k == 0) break;
  } while (!g_used.compare_exchange_weak(used, used + std::uint64_t{k} * raw::kSlotBytes, std::memory_order_relaxed));
  if (k == 0) {
    log::warn_once(log::Once::RawNoSlots, "thread " + std::to_string(index) +
                                              " records nothing: --memory-limit leaves no room for its ring slots (its events are counted as dropped)");
    return false;
  }
  if (raw::map_slots(index, k, ring_)) {
    file_backed_ = true;
  } else {
    const std::size_t bytes = std::size_t{k} * raw::kSlotBytes;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      g_used.fetch_sub(std::uint64_t{k} * raw::kSlotBytes, std::memory_order_relaxed);
      return false;
    }
    std::memset(m, 0, bytes);  // faulted in now, not on the hot path
    for (std::uint32_t i = 0; i < k; ++i) {
      auto* s = reinterpret_cast<raw::Slot*>(static_cast<char*>(m) + std::size_t{i} * raw::kSlotBytes);
      s->block.magic = raw::kBlockMagic;
      s->block.kind = raw::kRing;
      s->block.thread = index;
      s->block.payload = static_cast<std::uint32_t>(raw::kSlotBytes - sizeof(raw::BlockHeader));
      std::atomic_ref<raw::Slot*>(ring_[i]).store(s, std::memory_order_relaxed);  // read unlocked: ring_slot_unlocked
    }
  }
  ring_size_.store(k, std::memory_order_release);
  return true;
}

// Under the registry lock: the largest ring in the pool, if a fresh one would not be larger. Its
// slots are free and zeroed; they get this thread's index (a reader takes a slot's thread from
// its header, and ignores free slots).
bool ThreadBuffer::take_pooled_ring(std::uint32_t fresh) {
  auto& pool = registry().pool;
  auto best = pool.end();
  for (auto it = pool.begin(); it != pool.end(); ++it)
    if (best == pool.end() || it->slots > best->slots) best = it;
  if (best == pool.end() || best->slots < fresh) return false;
  const PooledRing ring = *best;
  pool.erase(best);
  for (std::uint32_t i = 0; i < ring.slots; ++i) {
    auto* s = reinterpret_cast<raw::Slot*>(reinterpret_cast<char*>(ring.base) + std::size_t{i} * raw::kSlotBytes);
    s->block.thread = index;
    s->block.seq = 0;
    s->committed.store(0, std::memory_order_relaxed);
    std::atomic_ref<raw::Slot*>(ring_[i]).store(s, std::memory_order_relaxed);  // read unlocked: ring_slot_unlocked
  }
  file_backed_ = true;
  ring_size_.store(ring.slots, std::memory_order_release);
  return true;
}

void ThreadBuffer::retire() {
  if (!registered || !file_backed_ || life_.load(std::memory_order_relaxed) != kLive ||
      ring_size_.load(std::memory_order_relaxed) == 0 || g_closed.load(std::memory_order_relaxed))
    return;
  const std::uint64_t lost = lost_n_.load(std::memory_order_relaxed);
  if (lost != 0) {
    raw::note_lost(index, raw::kLostRingFull, lost_first_.load(std::memory_order_relaxed),
                   lost_last_.load(std::memory_order_relaxed), lost);
    lost_n_.store(0, std::memory_order_relaxed);
  }
  if (cur_ != nullptr && !cur_full_) {
    // Handed over like a full slot, with its exact count (0 too: the writer moves past it).
    cur_full_ = true;
    cur_->committed.store(static_cast<std::uint32_t>(pos_.load(std::memory_order_relaxed) - cur_->recs),
                          std::memory_order_relaxed);
    cur_->state.store(raw::kSlotFull, std::memory_order_release);
  }
  end_ = nullptr;
  pos_.store(nullptr, std::memory_order_release);  // a later event takes the slow path (revive)
  g_retired.fetch_add(1, std::memory_order_relaxed);
  life_.store(kRetired, std::memory_order_release);
  raw::slot_full(*this);
}

bool ThreadBuffer::reclaim_ring() {
  if (life_.load(std::memory_order_acquire) != kRetired) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  // Again under the lock: the thread may have recorded again (revive) and ended again since.
  if (life_.load(std::memory_order_acquire) != kRetired) return false;
  const std::uint32_t k = ring_size_.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < k; ++i)
    if (ring_[i]->state.load(std::memory_order_acquire) != raw::kSlotFree) return false;
  if (k != 0) r.pool.push_back({ring_[0], k});
  ring_size_.store(0, std::memory_order_release);
  life_.store(kReclaimed, std::memory_order_release);
  g_retired.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// An event after the thread's end was handled: the thread takes its ring back if the writer has
// not pooled it yet (it goes on after the slot it handed over), else sets up a ring afresh.
bool ThreadBuffer::revive() {
  if (life_.load(std::memory_order_acquire) == kReclaimed) help_reclaim();
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    if (life_.load(std::memory_order_relaxed) == kRetired) {
      g_retired.fetch_sub(1, std::memory_order_relaxed);
    } else {
      cur_ = nullptr;
      cur_index_ = 0;
      cur_full_ = false;
      setup_ring();
    }
    life_.store(kLive, std::memory_order_release);
  }
  arm_thread_end(this);
  return ring_size_.load(std::memory_order_relaxed) != 0;
}

// Slow path: the slot is full (or there is none yet). Hands the full slot to the writer and takes
// the next slot of the ring. When that one still waits for the writer (which may get no core at all
// while the program's threads fill them), the thread copies its own full slots to the file itself,
// as the writer would, and notes the time that took as a ToolFlush record at the start of the slot
// it then takes: nothing is lost to a busy machine. The event is dropped (and counted) only where
// the thread has no ring (--memory-limit) or is already copying (a signal handler's event then).
bool ThreadBuffer::next_slot() {
  if (!registered) return false;  // a buffer only register_thread() made records; others drop
  if (KOB_UNLIKELY(life_.load(std::memory_order_relaxed) != kLive)) revive();
  if (!ring_tried_) {
    std::lock_guard<std::mutex> lock(registry().mu);
    setup_ring();
  }
  const std::uint32_t ring_size = ring_size_.load(std::memory_order_relaxed);
  if (ring_size == 0 || g_closed.load(std::memory_order_relaxed)) {
    count_drops_ = ring_size == 0 && !g_closed.load(std::memory_order_relaxed);
    return false;
  }
  if (cur_ != nullptr && !cur_full_) {
    cur_full_ = true;
    cur_->committed.store(raw::kSlotRecords, std::memory_order_relaxed);  // the cursor is at its end
    cur_->state.store(raw::kSlotFull, std::memory_order_release);
    raw::slot_full(*this);
  }
  const std::uint32_t i = cur_ == nullptr ? 0 : (cur_index_ + 1) % ring_size;
  raw::Slot* next = ring_[i];
  std::uint64_t flush_from = 0, flush_to = 0;
  std::uint32_t flushed = 0;
  if (next->state.load(std::memory_order_acquire) != raw::kSlotFree && !g_self_flush.load(std::memory_order_relaxed)) {
    // Tests only: the writer copies every slot, as when it keeps up (1 ms naps, no spinning).
    while (next->state.load(std::memory_order_acquire) != raw::kSlotFree && raw::writer::running()) {
      const timespec nap{0, 1'000'000};
      nanosleep(&nap, nullptr);
    }
  }
  if (next->state.load(std::memory_order_acquire) != raw::kSlotFree && !flushing_) {
    const deferred_signal::Scope no_term_signal;  // the copy's and the file's locks
    flushing_ = true;
    flush_from = clock::now();
    flushed = raw::writer::copy_thread(*this, false);
    flush_to = clock::now();
    flushing_ = false;
  }
  if (next->state.load(std::memory_order_acquire) != raw::kSlotFree) {
    count_drops_ = true;
    return false;
  }
  const std::uint64_t lost = lost_n_.load(std::memory_order_relaxed);
  if (lost != 0) {
    raw::note_lost(index, raw::kLostRingFull, lost_first_.load(std::memory_order_relaxed),
                   lost_last_.load(std::memory_order_relaxed), lost);
    lost_n_.store(0, std::memory_order_relaxed);
  }
  next->block.seq = ++seq_;
  next->committed.store(0, std::memory_order_relaxed);
  next->state.store(raw::kSlotFilling, std::memory_order_release);
  cur_ = next;
  cur_index_ = i;
  cur_full_ = false;
  end_ = next->recs + raw::kSlotRecords;
  Record* first = next->recs;
  if (flush_to != 0) {
    // Before the event that made the slot full: its tick is taken after this.
    first->tick = flush_from;
    first->type = Ev::ToolFlush;
    fields::ToolFlush::records.set(*first, flushed);
    fields::ToolFlush::ticks.set(*first, flush_to - flush_from);
    ++flushes_;
    flush_ticks_ += flush_to - flush_from;
    ++first;
  }
  pos_.store(first, std::memory_order_release);
  return true;
}

void ThreadBuffer::dropped_event() {
  if (!count_drops_) return;
  const std::uint64_t tick = clock::now();
  dropped_.fetch_add(1, std::memory_order_relaxed);
  if (!registered || ring_size_.load(std::memory_order_relaxed) == 0) return;
  if (lost_n_.load(std::memory_order_relaxed) == 0) {
    lost_first_.store(tick, std::memory_order_relaxed);
    log::warn_once(log::Once::RawRingFull,
                   "a thread's event came while it was copying its own full slots (a signal handler's): dropped (counted)");
  }
  lost_last_.store(tick, std::memory_order_relaxed);
  lost_n_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<ThreadBuffer::InMemory> ThreadBuffer::in_memory() const {
  std::vector<InMemory> out;
  std::vector<const raw::Slot*> live;
  for (std::uint32_t i = 0, k = ring_size(); i < k; ++i)
    if (ring_[i]->state.load(std::memory_order_acquire) != raw::kSlotFree) live.push_back(ring_[i]);
  std::sort(live.begin(), live.end(), [](const raw::Slot* a, const raw::Slot* b) { return a->block.seq < b->block.seq; });
  for (const raw::Slot* s : live) out.push_back({filled(*s, s->recs, raw::kSlotRecords), s->recs, s->block.seq});
  return out;
}

std::size_t ThreadBuffer::record_count() const {
  std::size_t n = 0;
  for_each([&](const Record&) { ++n; });
  return n;
}

namespace recorder {
void set_new_thread_hook(void (*hook)()) { g_new_thread_hook.store(hook, std::memory_order_release); }

void set_self_flush_for_test(bool on) { g_self_flush.store(on, std::memory_order_relaxed); }
void set_memory_limit(std::uint64_t bytes) { g_limit.store(bytes, std::memory_order_relaxed); }
void set_ring_slots(std::uint32_t n) {
  g_ring_slots.store(n < 2 ? 2 : n > ThreadBuffer::kMaxRing ? ThreadBuffer::kMaxRing : n, std::memory_order_relaxed);
}
std::uint64_t memory_used() { return g_used.load(std::memory_order_relaxed); }
std::uint32_t pooled_rings() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<std::uint32_t>(r.pool.size());
}
void close() { g_closed.store(true, std::memory_order_relaxed); }
bool closed() { return g_closed.load(std::memory_order_relaxed); }

std::vector<ThreadBuffer*> threads() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.threads;
}

std::uint64_t dropped_total() {
  std::uint64_t n = 0;
  for (ThreadBuffer* b : threads()) n += b->dropped();
  return n;
}

void release_file_rings() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (ThreadBuffer* b : r.threads) {
    const std::uint32_t k = b->ring_size_.load(std::memory_order_acquire);
    if (b->file_backed_ && k != 0) madvise(b->ring_[0], std::size_t{k} * raw::kSlotBytes, MADV_DONTNEED);
  }
  for (const PooledRing& p : r.pool) madvise(p.base, std::size_t{p.slots} * raw::kSlotBytes, MADV_DONTNEED);
}

void before_fork() { registry().mu.lock(); }

void after_fork_parent() { registry().mu.unlock(); }

void after_fork_child() {
  Registry& r = registry();
  ThreadBuffer* old = t_buffer;
  // The parent's slots: unmapped, never written here (they are the parent's file or memory). The
  // buffers themselves are not freed (their memory may be in an odd state) but kept where a leak
  // checker finds them: a program built with LeakSanitizer that forks must not see our buffers
  // reported at its child's exit.
  static auto* parents = new std::vector<ThreadBuffer*>();
  for (ThreadBuffer* b : r.threads) {
    unmap_ring(b->ring_, b->ring_size_.load(std::memory_order_relaxed));
    b->ring_size_.store(0, std::memory_order_relaxed);
    parents->push_back(b);
  }
  r.threads.clear();
  for (const PooledRing& p : r.pool) unmap_ring(&p.base, p.slots);
  r.pool.clear();
  g_retired.store(0, std::memory_order_relaxed);
  g_used.store(0, std::memory_order_relaxed);
  r.mu.unlock();
  t_buffer = nullptr;
  arm_thread_end(nullptr);
  if (old != nullptr) {
    ThreadBuffer* b = register_thread();
    b->kokkos = old->kokkos;
    b->omp_thread_type.store(old->omp_thread_type.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
}

void reset_for_test() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (ThreadBuffer* b : r.threads) delete b;  // tests only: their threads have ended
  r.threads.clear();
  for (const PooledRing& p : r.pool) unmap_ring(&p.base, p.slots);
  r.pool.clear();
  g_retired.store(0);
  arm_thread_end(nullptr);
  g_used.store(0);
  g_closed.store(false);
  g_ring_slots.store(kDefaultRing);
  g_self_flush.store(true);
  g_ids.kernel = 0;
  g_ids.fence = 0;
  g_ids.deep_copy = 0;
  g_ids.section = 0;
  g_ids.alloc = 0;
  g_ids.parallel = 0;
  g_ids.task = 0;
  g_ids.target = 0;
  g_ids.host_op = 0;
  t_buffer = nullptr;
}
}  // namespace recorder

}  // namespace kob
