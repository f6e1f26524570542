#include "common/timeline/thread_merge.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <queue>
#include <thread>
#include <tuple>

#include "common/record/clock.hpp"
#include "common/support/blocked_signals.hpp"
#include "common/timeline/timeline_builder.hpp"

namespace kob {

namespace {

// A decoded chunk: its events, their times on the thread's line (EventDecoder: one per thread,
// so that its chunks are decoded in order, on whichever thread decodes them).
using Chunk = EventChunk;

// Decodes a thread's next chunk that has records into c; false at the thread's end.
bool decode_next(const ThreadSource& th, std::size_t& chunk, EventDecoder& decoder, Chunk& c) {
  while (chunk < th.chunk_count()) {
    th.read_events(chunk++, decoder, c);
    if (!c.empty()) return true;
  }
  c.clear();
  return false;
}

// Each thread's chunks for the merge: decoded ahead of it by `decoders` threads, kAhead per thread
// at most (memory: a few chunks of each thread, as the merge holds one of each anyway), or, with
// none, by the merge itself when it reaches the thread's next chunk.
class Ahead {
 public:
  Ahead(const std::vector<const ThreadSource*>& threads, unsigned decoders) : lines_(threads.size()), workers_(decoders) {
    for (std::size_t i = 0; i < threads.size(); ++i) lines_[i].th = threads[i];
    try {
      const BlockAllSignals blocked;  // the program's handlers run on its own threads only
      for (unsigned w = 0; w < decoders; ++w) {
        threads_.emplace_back([this, w] { work(w); });
        pthread_setname_np(threads_.back().native_handle(), "kob-decode");  // as top and gdb show it
      }
    } catch (...) {
      // Fewer decoders (no thread could be started): a line with none is decoded by the merge.
    }
    for (std::size_t i = 0; i < lines_.size(); ++i) lines_[i].own = decoders != 0 && i % decoders < threads_.size() ? 0 : 1;
  }
  ~Ahead() {
    stop_.store(true, std::memory_order_release);
    for (Worker& w : workers_) {
      w.wake.fetch_add(1, std::memory_order_release);
      w.wake.notify_one();
    }
    for (std::thread& t : threads_) t.join();
  }
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  // Thread i's next chunk (the one given before goes back to its decoder); nullptr at its end.
  const Chunk* next(std::size_t i) {
    Line& l = lines_[i];
    if (l.own) return decode_next(*l.th, l.chunk, l.decoder, l.ring[0]) ? &l.ring[0] : nullptr;
    if (l.taken > 0) {
      l.consumed.store(l.taken, std::memory_order_release);
      Worker& w = workers_[i % workers_.size()];
      w.wake.fetch_add(1, std::memory_order_release);
      w.wake.notify_one();
    }
    for (;;) {
      const std::uint32_t v = l.produced.load(std::memory_order_acquire);
      if ((v & ~kDone) > l.taken) break;
      if (v & kDone) {
        if (l.error) std::rethrow_exception(l.error);
        return nullptr;
      }
      l.produced.wait(v, std::memory_order_acquire);
    }
    return &l.ring[l.taken++ % kAhead];
  }

 private:
  static constexpr std::uint32_t kAhead = 3;
  static constexpr std::uint32_t kDone = 0x80000000u;  // in `produced`: the thread has no more chunks

  struct Line {
    const ThreadSource* th = nullptr;
    int own = 0;  // 1: decoded by the merge itself (no decoders, or its decoder could not be started)
    // The decoder's side.
    std::size_t chunk = 0;
    EventDecoder decoder{clock::line()};  // taken when the reading starts: the clock stays put while it lasts
    std::exception_ptr error;  // set before kDone
    std::array<Chunk, kAhead> ring;
    std::atomic<std::uint32_t> produced{0};  // chunks decoded (| kDone)
    std::atomic<std::uint32_t> consumed{0};  // chunks the merge gave back
    // The merge's side: chunks it took.
    std::uint32_t taken = 0;
  };
  struct Worker {
    std::atomic<std::uint32_t> wake{0};  // raised when a line of this worker's has room or at stop
  };

  void work(unsigned w) {
    const std::size_t stride = workers_.size();
    Worker& me = workers_[w];
    for (;;) {
      const std::uint32_t seen = me.wake.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      bool busy = false, open = false;
      for (std::size_t i = w; i < lines_.size(); i += stride) {
        Line& l = lines_[i];
        std::uint32_t p = l.produced.load(std::memory_order_relaxed);  // this thread alone writes it
        if (p & kDone) continue;
        open = true;
        while (p - l.consumed.load(std::memory_order_acquire) < kAhead && !stop_.load(std::memory_order_relaxed)) {
          bool more = false;
          try {
            more = decode_next(*l.th, l.chunk, l.decoder, l.ring[p % kAhead]);
          } catch (...) {
            l.error = std::current_exception();  // (memory) the merge throws it in its own thread
          }
          p = more ? p + 1 : p | kDone;
          l.produced.store(p, std::memory_order_release);
          l.produced.notify_one();
          busy = true;
          if (!more) break;
        }
      }
      if (!open) return;
      if (!busy) me.wake.wait(seen, std::memory_order_acquire);
    }
  }

  std::vector<Line> lines_;
  std::vector<Worker> workers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
};

struct Cursor {
  std::uint32_t track = 0;
  const Chunk* chunk = nullptr;
  const Event* at = nullptr;  // the next event, in chunk
  std::uint64_t ns = 0;       // its time
  bool take(const Chunk* c) {
    chunk = c;
    if (c == nullptr) return false;
    at = c->begin();
    ns = at->ns;
    return true;
  }
};

}  // namespace

void read_threads(const std::vector<const ThreadSource*>& threads, TimelineBuilder& builder, unsigned decoders) {
  std::vector<Cursor> cur(threads.size());
  for (std::size_t i = 0; i < threads.size(); ++i) cur[i].track = builder.add_thread(*threads[i]);
  Ahead ahead(threads, static_cast<unsigned>(std::min<std::size_t>(decoders, threads.size())));
  const auto load = [&](std::size_t i) { return cur[i].take(ahead.next(i)); };
  // The cursor with the earliest event on top; ties: the lower track.
  auto later = [&](std::size_t a, std::size_t b) { return std::tie(cur[a].ns, cur[a].track) > std::tie(cur[b].ns, cur[b].track); };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  for (std::size_t i = 0; i < cur.size(); ++i)
    if (load(i)) heap.push(i);
  while (!heap.empty()) {
    const std::size_t i = heap.top();
    heap.pop();
    Cursor& c = cur[i];
    // Its events up to the next thread's first one, without going through the heap: the run goes
    // to the builder in one call.
    for (;;) {
      const Event* const last = c.chunk->end();
      const Event* end = last;
      if (!heap.empty()) {
        const Cursor& next = cur[heap.top()];
        // The first event is the earliest of all (it was on top); the run takes those after it
        // that are not later than the next thread's first (a tie: the lower track first).
        end = c.at->next();
        if (c.track < next.track) {
          while (end < last && end->ns <= next.ns) end = end->next();
        } else {
          while (end < last && end->ns < next.ns) end = end->next();
        }
      }
      builder.record_run(c.track, c.at, end);
      if (end < last) {
        c.at = end;
        c.ns = end->ns;
        heap.push(i);
        break;
      }
      if (!load(i)) break;
      if (!heap.empty() && later(i, heap.top())) {
        heap.push(i);
        break;
      }
    }
  }
}

}  // namespace kob
