#include "common/recorder.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <new>

namespace kob {

constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
IdCounters g_ids;

namespace {
struct Registry {
  std::mutex mu;
  std::vector<ThreadBuffer*> threads;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: read during exit
  return *r;
}
std::atomic<std::uint64_t> g_limit{1024ull << 20};
std::atomic<std::uint64_t> g_used{0};
std::atomic<bool> g_closed{false};
}  // namespace

ThreadBuffer* register_thread() {
  auto* b = new ThreadBuffer();
  b->os_tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    b->index = static_cast<std::uint32_t>(r.threads.size());
    r.threads.push_back(b);
  }
  t_buffer = b;
  return b;
}

ThreadBuffer::~ThreadBuffer() {
  for (Chunk* c = first_; c != nullptr;) {
    Chunk* next = c->next;
    c->~Chunk();
    std::free(c);
    c = next;
  }
}

Record* ThreadBuffer::grow() {
  if (g_closed.load(std::memory_order_relaxed)) return nullptr;
  const std::uint64_t size = sizeof(Chunk);
  std::uint64_t used = g_used.load(std::memory_order_relaxed);
  do {
    if (used + size > g_limit.load(std::memory_order_relaxed)) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  } while (!g_used.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
  void* mem = std::aligned_alloc(alignof(Chunk), sizeof(Chunk));
  if (mem == nullptr) {
    g_used.fetch_sub(size, std::memory_order_relaxed);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // Default-initialised, not value-initialised: zeroing 128 KiB that every record overwrites
  // anyway would cost more than all the events of the chunk.
  auto* c = new (mem) Chunk;
  // Link before publishing cur_: a reader that sees cur_ in the new chunk also sees the link.
  if (last_ == nullptr) {
    first_ = c;
  } else {
    last_->next = c;
  }
  last_ = c;
  end_ = c->recs + Chunk::kRecords;
  cur_.store(c->recs, std::memory_order_release);
  return c->recs;
}

std::size_t ThreadBuffer::record_count() const {
  std::size_t n = 0;
  for_each([&](const Record&) { ++n; });
  return n;
}

namespace recorder {
void set_memory_limit(std::uint64_t bytes) { g_limit.store(bytes, std::memory_order_relaxed); }
std::uint64_t memory_used() { return g_used.load(std::memory_order_relaxed); }
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

void before_fork() { registry().mu.lock(); }

void after_fork_parent() { registry().mu.unlock(); }

void after_fork_child() {
  Registry& r = registry();
  ThreadBuffer* old = t_buffer;
  r.threads.clear();
  g_used.store(0, std::memory_order_relaxed);
  r.mu.unlock();
  t_buffer = nullptr;
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
  g_used.store(0);
  g_closed.store(false);
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
