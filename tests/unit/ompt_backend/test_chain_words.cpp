// The data word pairs of a chained OpenMP tool (ompt_backend/chain_words): made once per word,
// given back by any thread, reused by the thread that made them.
#include <doctest/doctest.h>

#include <thread>

#include "ompt_backend/chain_words.hpp"

using namespace kob::omp::chain;

TEST_CASE("a word's pair is made once, kept in the word, and emptied when given back") {
  ompt_data_t word{};
  CHECK(pair_if_any(&word) == nullptr);
  CHECK(word.value == 0);  // asking does not make one
  WordPair* p = pair_of(&word);
  REQUIRE(p != nullptr);
  CHECK(word.ptr == p);
  CHECK(pair_of(&word) == p);
  CHECK(pair_if_any(&word) == p);
  CHECK(p->ours.value == 0);
  CHECK(p->theirs.value == 0);
  p->ours.value = 7;
  p->theirs.value = 9;
  release(&word);
  CHECK(word.value == 0);
  release(&word);  // twice: nothing to give back
  CHECK(pair_of(static_cast<ompt_data_t*>(nullptr)) == nullptr);
  CHECK(pair_if_any(nullptr) == nullptr);
  release(static_cast<ompt_data_t*>(nullptr));
}

TEST_CASE("a pair given back is handed out again with both words empty") {
  ompt_data_t a{};
  WordPair* p = pair_of(&a);
  p->ours.value = 1;
  p->theirs.value = 2;
  release(&a);
  ompt_data_t b{};
  WordPair* q = pair_of(&b);  // this thread's free list: the same pair first
  CHECK(q == p);
  CHECK(q->ours.value == 0);
  CHECK(q->theirs.value == 0);
  release(&b);
}

TEST_CASE("host operation ids pair like data words") {
  ompt_id_t id = 0;
  WordPair* p = pair_of(&id);
  REQUIRE(p != nullptr);
  CHECK(id == reinterpret_cast<std::uintptr_t>(p));
  release(&id);
  CHECK(id == 0);
}

TEST_CASE("a pair given back on another thread returns to the pool that made it") {
  ompt_data_t word{};
  WordPair* made = nullptr;
  std::thread maker([&] {
    made = pair_of(&word);
    std::thread other([&] { release(&word); });  // the object ends on another thread
    other.join();
    CHECK(word.value == 0);
    // The maker's free list runs out after the rest of its first slab; then the pairs given back
    // by other threads come in, the one above among them.
    bool found = false;
    ompt_data_t words[600]{};
    for (auto& w : words) found = found || pair_of(&w) == made;
    CHECK(found);
    for (auto& w : words) release(&w);
  });
  maker.join();
}

TEST_CASE("two threads meeting one empty word get the same pair") {
  for (int round = 0; round < 50; ++round) {
    ompt_data_t word{};
    WordPair *a = nullptr, *b = nullptr;
    std::thread t1([&] { a = pair_of(&word); });
    std::thread t2([&] { b = pair_of(&word); });
    t1.join();
    t2.join();
    CHECK(a == b);
    CHECK(word.ptr == a);
    release(&word);
  }
}
