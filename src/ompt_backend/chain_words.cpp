#include "ompt_backend/chain_words.hpp"

#include <new>

namespace kob::omp::chain {

struct PairPool {
  WordPair* free = nullptr;                   // this thread's
  std::atomic<WordPair*> returned{nullptr};  // pairs given back by other threads
};

namespace {

// A pool lives as long as the process: pairs it made may be given back after its thread ended.
constinit thread_local PairPool* t_pool __attribute__((tls_model("initial-exec"))) = nullptr;

constexpr int kSlab = 256;  // pairs made at once when a pool is empty

PairPool* pool() {
  if (t_pool == nullptr) t_pool = new (std::nothrow) PairPool;
  return t_pool;
}

WordPair* take() {
  PairPool* p = pool();
  if (p == nullptr) return nullptr;
  if (p->free == nullptr) p->free = p->returned.exchange(nullptr, std::memory_order_acquire);
  if (p->free == nullptr) {
    WordPair* slab = new (std::nothrow) WordPair[kSlab];
    if (slab == nullptr) return nullptr;
    for (int i = 0; i < kSlab; ++i) slab[i] = WordPair{{}, {}, i + 1 < kSlab ? &slab[i + 1] : nullptr, p};
    p->free = slab;
  }
  WordPair* w = p->free;
  p->free = w->next;
  w->ours.value = 0;
  w->theirs.value = 0;
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

void release_at(std::uint64_t* word) {
  if (word == nullptr) return;
  const std::uint64_t held = std::atomic_ref<std::uint64_t>(*word).exchange(0, std::memory_order_acq_rel);
  if (held != 0) give_back(reinterpret_cast<WordPair*>(held));
}

}  // namespace

WordPair* make_pair(std::uint64_t* word) {
  std::atomic_ref<std::uint64_t> v(*word);
  WordPair* made = take();
  if (made == nullptr) return nullptr;  // out of memory: the tools see null words
  std::uint64_t held = 0;
  if (v.compare_exchange_strong(held, reinterpret_cast<std::uintptr_t>(made), std::memory_order_acq_rel)) return made;
  give_back(made);  // another thread stored one first
  return reinterpret_cast<WordPair*>(held);
}

void release(ompt_data_t* word) { release_at(word ? &word->value : nullptr); }
void release(ompt_id_t* word) { release_at(word); }

}  // namespace kob::omp::chain
