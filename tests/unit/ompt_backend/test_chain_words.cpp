// The data word pairs of a chained OpenMP tool (ompt_backend/chain_words): made once per object,
// still named by the object's word after it ended, reused only kRetireDepth ends later, given
// back by any thread to the pool that made them.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "ompt_backend/chain_words.hpp"

using namespace kob::omp::chain;

namespace {
// Ends kRetireDepth objects on this thread: every pair that ended before on it goes back.
void end_many() {
  std::vector<ompt_data_t> words(kRetireDepth);
  for (auto& w : words) {
    begin_pair(&w);
    release(&w);
  }
}
}  // namespace

TEST_CASE("a word's pair is made once and kept in the word, also after its object ended") {
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
  CHECK(pair_of(&word) == p);  // a late mention of the ended object finds its words
  CHECK(p->ours.value == 7);
  CHECK(p->theirs.value == 9);
  release(&word);  // ended twice: given back once
  CHECK(pair_of(static_cast<ompt_data_t*>(nullptr)) == nullptr);
  CHECK(pair_if_any(static_cast<ompt_data_t*>(nullptr)) == nullptr);
  release(static_cast<ompt_data_t*>(nullptr));
}

TEST_CASE("a new object's begin makes a new pair whatever its word held") {
  ompt_data_t word{};
  WordPair* p = begin_pair(&word);
  p->theirs.value = 5;
  release(&word);
  WordPair* q = begin_pair(&word);  // the runtime reused the word for a new object
  CHECK(q != p);
  CHECK(word.ptr == q);
  CHECK(q->theirs.value == 0);
  release(&word);
}

TEST_CASE("an ended object's pair is handed out again kRetireDepth ends later, its words empty") {
  ompt_data_t a{};
  WordPair* p = begin_pair(&a);
  p->ours.value = 1;
  p->theirs.value = 2;
  release(&a);
  end_many();
  bool found = false;
  std::vector<ompt_data_t> words(2 * kRetireDepth);
  for (auto& w : words) {
    WordPair* q = begin_pair(&w);
    if (q == p) {
      found = true;
      CHECK(q->ours.value == 0);
      CHECK(q->theirs.value == 0);
    }
  }
  CHECK(found);
  for (auto& w : words) release(&w);
}

TEST_CASE("host operation ids pair like data words") {
  ompt_id_t id = 0;
  WordPair* p = begin_pair(&id);
  REQUIRE(p != nullptr);
  CHECK(id == reinterpret_cast<std::uintptr_t>(p));
  CHECK(pair_of(&id) == p);
  release(&id);
}

TEST_CASE("a pair that ends on another thread returns to the pool that made it") {
  ompt_data_t word{};
  WordPair* made = nullptr;
  std::thread maker([&] {
    made = begin_pair(&word);
    std::thread other([&] {
      release(&word);  // the object ends on another thread,
      end_many();      // whose later ends send it home
    });
    other.join();
    // The maker's free list runs out after the rest of its first slab; then the pairs given back
    // by other threads come in, the one above among them.
    bool found = false;
    std::vector<ompt_data_t> words(4 * kRetireDepth);
    for (auto& w : words) found = found || begin_pair(&w) == made;
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
