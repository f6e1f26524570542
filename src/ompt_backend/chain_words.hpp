// The runtime's ompt_data_t words while a chained OpenMP tool runs beside this library. Each tool
// must see a word of its own for every parallel region, task and target region (OMPT gives one),
// so the runtime's word holds a pair, one word for each, made when the object begins (or when a
// word is first met empty) and given back when it ends, kRetireDepth ends later on that thread (the
// runtime may still mention an object that just ended). Pairs come from per-thread pools: no heap
// allocation on the hot path once a pool has grown to what the program keeps open at once; a pair
// that ends on another thread than the one that made it goes back to its pool's return stack.
// Thread words are not paired: this library does not use its thread word, so the child owns it.
#pragma once

#include <omp-tools.h>

#include <atomic>
#include <cstdint>

namespace kob::omp::chain {

struct PairPool;

struct WordPair {
  ompt_data_t ours{};
  ompt_data_t theirs{};
  WordPair* next = nullptr;  // in a pool's free list or return stack
  PairPool* home = nullptr;
  std::atomic<bool> retired{false};  // its object ended
};

constexpr int kRetireDepth = 256;

// The words are 64-bit values (ompt_data_t's value, an ompt_id_t): each function has one body,
// on the value, and an ompt_data_t form that forwards to it.
inline std::uint64_t* value_of(ompt_data_t* word) { return word ? &word->value : nullptr; }

// Makes a pair for an empty word and stores it there (another thread's, if one stored first).
WordPair* make_pair(std::uint64_t* word);

// The pair the word holds, or null (never makes one).
inline WordPair* pair_if_any(const std::uint64_t* word) {
  if (word == nullptr) return nullptr;
  return reinterpret_cast<WordPair*>(std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(word)).load(std::memory_order_acquire));
}
inline WordPair* pair_if_any(const ompt_data_t* word) { return pair_if_any(word ? &word->value : nullptr); }

// The pair the runtime's word holds, made and stored there when the word is empty. Null for a
// null word. Two threads that meet one empty word at once get the same pair.
inline WordPair* pair_of(std::uint64_t* word) {
  WordPair* p = pair_if_any(word);
  return p != nullptr || word == nullptr ? p : make_pair(word);
}
inline WordPair* pair_of(ompt_data_t* word) { return pair_of(value_of(word)); }

// An object begins: a new pair in its word, whatever the word held (an ended object's).
WordPair* begin_pair(std::uint64_t* word);
inline WordPair* begin_pair(ompt_data_t* word) { return begin_pair(value_of(word)); }

// The object ended: its pair goes back (kRetireDepth ends later); the word keeps naming it.
void release(std::uint64_t* word);
inline void release(ompt_data_t* word) { release(value_of(word)); }

}  // namespace kob::omp::chain
