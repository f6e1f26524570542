#include "common/record/raw_writer.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <vector>

#include "common/record/clock.hpp"
#include "common/support/blocked_signals.hpp"
#include "common/support/log.hpp"
#include "common/support/wide_zero.hpp"
#include "common/record/module_map.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/recorder.hpp"

namespace kob::raw::writer {

namespace {

constexpr long kTickNs = 50'000'000;  // a pass every 50 ms when no producer wakes the thread (idle: 20 wake-ups/s)
constexpr std::uint64_t kCalibNs = 1'000'000'000;  // a CALIB entry (and pending LOST entries) every second

struct State {
  std::mutex mu;  // start/stop
  pthread_t thread{};
  bool started = false;
  std::atomic<bool> running{false};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint32_t> wake_word{0};
  // One copier at a time (the thread, finish(), or a producer without a thread): a thread's
  // next sequence number and its slots' hand-back are theirs alone.
  std::mutex copy_mu;
};

State* g_state = new State();  // never destroyed; started afresh in a fork child

long futex(std::atomic<std::uint32_t>* addr, int op, std::uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), op, val, ts, nullptr, 0);
}

// Writes a THREAD entry when the thread's OpenMP identity changed since the last one written.
void check_identity(ThreadBuffer& b) {
  const int type = b.omp_thread_type.load(std::memory_order_relaxed);
  const int proc = b.omp_proc.load(std::memory_order_relaxed);
  const int place = b.omp_place.load(std::memory_order_relaxed);
  if (type == b.written_type && proc == b.written_proc && place == b.written_place) return;
  b.written_type = type;
  b.written_proc = proc;
  b.written_place = place;
  note_thread(b);
}

std::atomic<bool> g_paused{false};

void pass() {
  if (g_paused.load(std::memory_order_relaxed)) return;
  modules::poll();  // objects loaded since the last pass, if any (one dl_iterate_phdr step when none)
  for (ThreadBuffer* b : recorder::threads()) {
    copy_thread(*b, false);
    check_identity(*b);
  }
}

void* loop(void*) {
  State& s = *g_state;
  std::uint64_t last_calib = clock::raw_ns();
  while (!s.stopping.load(std::memory_order_acquire)) {
    if (s.wake_word.exchange(0, std::memory_order_acq_rel) == 0) {
      const timespec ts{0, kTickNs};
      futex(&s.wake_word, FUTEX_WAIT_PRIVATE, 0, &ts);
    }
    pass();
    const std::uint64_t now = clock::raw_ns();
    if (now - last_calib >= kCalibNs) {
      last_calib = now;
      write_calib(true);
      flush_lost();
    }
  }
  pass();
  return nullptr;
}

}  // namespace

bool start() {
  State& s = *g_state;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.started) return true;
  s.stopping.store(false);
  s.running.store(true);
  int rc;
  {
    const BlockAllSignals blocked;  // the program's handlers run on its own threads only
    rc = pthread_create(&s.thread, nullptr, loop, nullptr);
  }
  if (rc != 0) {
    s.running.store(false);
    log::warn(std::string("cannot start the raw trace's writer thread (") + std::strerror(rc) +
              "); threads copy their own events to the file");
    return false;
  }
  pthread_setname_np(s.thread, "kob-writer");
  // The idle class: the writer runs on a core the program leaves free and never takes one from its
  // threads; where none is free, each thread copies its own full slots (recorder.cpp, next_slot).
  const sched_param idle{};
  pthread_setschedparam(s.thread, SCHED_IDLE, &idle);
  s.started = true;
  return true;
}

void stop() {
  State& s = *g_state;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started) return;
  s.stopping.store(true, std::memory_order_release);
  wake();
  pthread_join(s.thread, nullptr);
  s.started = false;
  s.running.store(false);
}

bool running() { return g_state->running.load(std::memory_order_acquire); }

void wake() {
  State& s = *g_state;
  if (s.wake_word.exchange(1, std::memory_order_acq_rel) == 0) futex(&s.wake_word, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

namespace {
// Published records as they are now. Their producer may still fold a later step into the u words
// of its last one (host_callbacks.cpp, fold_step: a relaxed atomic store), so those are read
// atomically; the rest is never written after publication.
void snapshot(Record* src, std::uint32_t n, Record* dst) {
  for (std::uint32_t i = 0; i < n; ++i) {
    dst[i].tick = src[i].tick;
    dst[i].type = src[i].type;
    dst[i].sub = src[i].sub;
    dst[i].a = src[i].a;
    for (int j = 0; j < 6; ++j) dst[i].u[j] = std::atomic_ref<std::uint64_t>(src[i].u[j]).load(std::memory_order_relaxed);
  }
}
}  // namespace

namespace {
// Whether a pass has anything to do for b: a full slot, a slot whose count in the file is behind,
// or an ended thread's ring to pool. Reads only, without the lock: most of the writer's timed
// passes find nothing, and the lock and the loops below cost more than the records they copy
// when a run is slow (under valgrind, passes outnumber chunks 30 to 1). A slot that fills just
// after the look is the next pass's.
bool has_work(const ThreadBuffer& b) {
  if (b.retired()) return true;
  const std::uint32_t k = b.ring_size();
  for (std::uint32_t i = 0; i < k; ++i) {
    const Slot* s = b.ring_slot_unlocked(i);
    const std::uint32_t st = s->state.load(std::memory_order_acquire);
    if (st == kSlotFull) return true;
    if (st == kSlotFilling && b.filled(*s, s->recs, kSlotRecords) > s->committed.load(std::memory_order_relaxed)) return true;
  }
  return false;
}
}  // namespace

std::uint32_t copy_thread(ThreadBuffer& b, bool final) {
  if (!final && !has_work(b)) return 0;
  std::lock_guard<std::mutex> lock(g_state->copy_mu);
  const std::uint32_t k = b.ring_size();
  std::uint32_t records = 0;
  // The producer keeps its cursor in memory only (one store per event); its slot's count in the
  // file is brought up to date here, every pass, so that a file cut short (SIGKILL) says where the
  // complete records end. Only ever raised: the producer sets it exactly when it hands the slot over.
  for (std::uint32_t i = 0; i < k; ++i) {
    Slot* s = b.ring_slot(i);
    if (s->state.load(std::memory_order_acquire) != kSlotFilling) continue;
    const std::uint32_t n = b.filled(*s, s->recs, kSlotRecords);
    std::uint32_t old = s->committed.load(std::memory_order_relaxed);
    while (old < n && !s->committed.compare_exchange_weak(old, n, std::memory_order_release)) {
    }
  }
  // At most a ring's worth of slots per call (finish: all of them): a thread that refills its
  // slots as fast as they are copied must not keep the writer from the other threads' (their
  // producers would wait, then drop, while one flooding thread had the writer to itself).
  for (std::uint32_t copied = 0; final || copied < k; ++copied) {
    Slot* next = nullptr;
    std::uint32_t state = kSlotFree;
    for (std::uint32_t i = 0; i < k; ++i) {
      Slot* s = b.ring_slot(i);
      const std::uint32_t st = s->state.load(std::memory_order_acquire);
      if (st != kSlotFree && s->block.seq == b.next_write_seq) {
        next = s;
        state = st;
        break;
      }
    }
    if (next == nullptr) {
      b.reclaim_ring();  // an ended thread's ring, all copied, goes to the pool
      return records;
    }
    const std::uint32_t n = state == kSlotFilling ? b.filled(*next, next->recs, kSlotRecords)
                                                  : next->committed.load(std::memory_order_acquire);
    if (state == kSlotFilling) {
      // The slot being filled (finish): its records so far, the slot left to its thread, which
      // may still be recording (a signal's write) and folding a step into its last record.
      if (final && n > 0) {
        std::vector<Record> now(n);
        snapshot(next->recs, n, now.data());
        if (!write_chunk(b.index, next->block.seq, now.data(), n)) b.add_dropped(program_events(now.data(), n));
        records += n;
      }
      return records;
    }
    if (!write_chunk(b.index, next->block.seq, next->recs, n)) b.add_dropped(program_events(next->recs, n));
    records += n;
    // Zeroed so that the file never shows records of an older chunk in a slot, and so that a
    // reader can tell the complete records past a stale `committed` (nonzero type and tick).
    // `committed` stays; the producer sets it to 0 itself when it takes the slot again.
    // Wide stores, not memset (see wide_zero.hpp); every field, so the coder may skip the fields
    // a type does not carry (fields::kCarried).
    wide_zero(next->recs, std::size_t{n} * sizeof(Record));
    next->state.store(kSlotFree, std::memory_order_release);
    ++b.next_write_seq;
  }
  return records;
}

void pause_for_test(bool paused) { g_paused.store(paused, std::memory_order_relaxed); }

// The parent's state (its mutexes possibly held by its writer thread, which the child does not
// have) is started afresh in place, without destroying anything.
void after_fork_child() { new (g_state) State(); }

}  // namespace kob::raw::writer
