#include "ompt_backend/chain_words.hpp"

#include <pthread.h>

#include <new>

namespace kob::omp::chain {

struct PairPool {
  WordPair* free = nullptr;                   // its thread's
  std::atomic<WordPair*> returned{nullptr};  // pairs given back by other threads
  std::atomic<bool> owned{true};             // a live thread uses it
  PairPool* next_pool = nullptr;              // the process's list
  // Pairs of objects that ended on this thread, oldest next: they go back only kRetireDepth
  // ends later, so that a late mention of an ended object still finds its words.
  WordPair* retiring[kRetireDepth] = {};
  unsigned retire_at = 0;
};

namespace {

// Pools live as long as the process (pairs they made may be given back after their thread
// ended), in one list: a thread that starts takes a pool whose thread has ended, if there is one.
constinit thread_local PairPool* t_pool __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<PairPool*> g_pools{nullptr};
pthread_key_t g_thread_end;

void on_thread_end(void* pool) { static_cast<PairPool*>(pool)->owned.store(false, std::memory_order_release); }

PairPool* adopt_or_make() {
  for (PairPool* p = g_pools.load(std::memory_order_acquire); p != nullptr; p = p->next_pool) {
    bool owned = false;
    if (p->owned.compare_exchange_strong(owned, true, std::memory_order_acquire)) return p;
  }
  auto* p = new (std::nothrow) PairPool;
  if (p == nullptr) return nullptr;
  p->next_pool = g_pools.load(std::memory_order_relaxed);
  while (!g_pools.compare_exchange_weak(p->next_pool, p, std::memory_order_release, std::memory_order_relaxed)) {
  }
  return p;
}

constexpr int kSlab = 256;  // pairs made at once when a pool is empty

__attribute__((noinline)) PairPool* first_pool() {
  static const bool have_key = pthread_key_create(&g_thread_end, on_thread_end) == 0;
  t_pool = adopt_or_make();
  if (t_pool != nullptr && have_key) pthread_setspecific(g_thread_end, t_pool);
  return t_pool;
}

inline PairPool* pool() { return t_pool != nullptr ? t_pool : first_pool(); }

WordPair* take() {
  PairPool* p = pool();
  if (p == nullptr) return nullptr;
  if (p->free == nullptr) p->free = p->returned.exchange(nullptr, std::memory_order_acquire);
  if (p->free == nullptr) {
    WordPair* slab = new (std::nothrow) WordPair[kSlab];
    if (slab == nullptr) return nullptr;
    for (int i = 0; i < kSlab; ++i) {
      slab[i].next = i + 1 < kSlab ? &slab[i + 1] : nullptr;
      slab[i].home = p;
    }
    p->free = slab;
  }
  WordPair* w = p->free;
  p->free = w->next;
  w->ours.value = 0;
  w->theirs.value = 0;
  w->retired.store(false, std::memory_order_relaxed);
  return w;
}

void give_back(WordPair* w) {
  PairPool* home = w->home;
  if (home == t_pool) {
    w->next = home->free;
    home->free = w;
    return;
  }
  WordPair* head = home->returned.load(std::memory_order_relaxed);
  do {
    w->next = head;
  } while (!home->returned.compare_exchange_weak(head, w, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace

// The word keeps naming its pair: the runtime may still mention an ended object (a task that
// completed as a dependence on it was being reported), and a new object's begin makes a new pair.
void release(std::uint64_t* word) {
  if (word == nullptr) return;
  auto* w = reinterpret_cast<WordPair*>(std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire));
  if (w == nullptr || w->retired.exchange(true, std::memory_order_relaxed)) return;  // none, or ended twice
  PairPool* p = pool();
  if (p == nullptr) {
    std::atomic_ref<std::uint64_t>(*word).store(0, std::memory_order_release);
    give_back(w);
    return;
  }
  WordPair* oldest = p->retiring[p->retire_at];
  p->retiring[p->retire_at] = w;
  p->retire_at = (p->retire_at + 1) % kRetireDepth;
  if (oldest != nullptr) give_back(oldest);
}

WordPair* begin_pair(std::uint64_t* word) {
  if (word == nullptr) return nullptr;
  WordPair* made = take();
  std::atomic_ref<std::uint64_t>(*word).store(reinterpret_cast<std::uintptr_t>(made), std::memory_order_release);
  return made;
}

WordPair* make_pair(std::uint64_t* word) {
  std::atomic_ref<std::uint64_t> v(*word);
  WordPair* made = take();
  if (made == nullptr) return nullptr;  // out of memory: the tools see null words
  std::uint64_t held = 0;
  if (v.compare_exchange_strong(held, reinterpret_cast<std::uintptr_t>(made), std::memory_order_acq_rel)) return made;
  give_back(made);  // another thread stored one first
  return reinterpret_cast<WordPair*>(held);
}

}  // namespace kob::omp::chain
