// Per-thread chunked buffers: concurrent filling, chunk growth, the memory cap.
#include <doctest/doctest.h>

#include <algorithm>
#include <latch>
#include <set>
#include <thread>

#include "helpers.hpp"

using kob::Chunk;
using kob::Record;
using kob::ThreadBuffer;
using kob_test::RecorderReset;

namespace {

// Emits n records on the calling thread: u[0] = tag, u[1] = sequence number.
void emit_seq(std::uint64_t tag, std::uint64_t n) {
  ThreadBuffer& b = kob::this_thread();
  for (std::uint64_t i = 0; i < n; ++i) {
    b.emit([&](Record& r) {
      r.tick = i;
      r.type = kob::Ev::ProfileEvent;
      r.a = 0;
      r.u[0] = tag;
      r.u[1] = i;
    });
  }
}

// Checks that b holds exactly n records tagged tag, numbered 0..n-1 in order.
void check_seq(const ThreadBuffer& b, std::uint64_t tag, std::uint64_t n) {
  std::uint64_t next = 0, wrong_tag = 0, out_of_order = 0;
  b.for_each([&](const Record& r) {
    if (r.u[0] != tag) ++wrong_tag;
    if (r.u[1] != next) ++out_of_order;
    ++next;
  });
  CHECK(next == n);
  CHECK(wrong_tag == 0);
  CHECK(out_of_order == 0);
  CHECK(b.record_count() == n);
}

}  // namespace

TEST_CASE("recorder: 8 threads x 10000 records, each read back once and in order") {
  RecorderReset reset;
  constexpr int kThreads = 8;
  constexpr std::uint64_t kPerThread = 10'000;
  std::vector<ThreadBuffer*> own(kThreads, nullptr);
  std::latch registered(kThreads), go(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      own[t] = &kob::this_thread();
      registered.count_down();
      go.wait();  // all emit at the same time
      emit_seq(static_cast<std::uint64_t>(t), kPerThread);
      CHECK(&kob::this_thread() == own[t]);  // the same buffer for the life of the thread
    });
  }
  registered.wait();
  go.count_down();
  for (auto& th : threads) th.join();

  const auto regd = kob::recorder::threads();
  REQUIRE(regd.size() == kThreads);
  std::set<std::uint32_t> indices;
  std::set<std::uint64_t> tids;
  for (std::size_t i = 0; i < regd.size(); ++i) {
    CHECK(regd[i]->index == i);  // registration order
    indices.insert(regd[i]->index);
    tids.insert(regd[i]->os_tid);
  }
  CHECK(indices.size() == kThreads);
  CHECK(tids.size() == kThreads);
  std::uint64_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(std::find(regd.begin(), regd.end(), own[t]) != regd.end());
    check_seq(*own[t], static_cast<std::uint64_t>(t), kPerThread);
    total += own[t]->record_count();
  }
  CHECK(total == kThreads * kPerThread);
  CHECK(kob::recorder::dropped_total() == 0);
  // 10000 records need 5 chunks per thread.
  CHECK(kob::recorder::memory_used() == kThreads * 5 * sizeof(Chunk));
}

TEST_CASE("recorder: chunk growth on one thread") {
  RecorderReset reset;
  std::thread([] {
    ThreadBuffer& b = kob::this_thread();
    CHECK(b.record_count() == 0);
    CHECK(kob::recorder::memory_used() == 0);  // no chunk before the first record

    emit_seq(7, Chunk::kRecords);  // exactly one full chunk
    CHECK(kob::recorder::memory_used() == sizeof(Chunk));
    check_seq(b, 7, Chunk::kRecords);

    kob::recorder::reset_for_test();  // forget the above; t_buffer of this thread is cleared too
    emit_seq(9, 3 * Chunk::kRecords + 5);
    CHECK(kob::recorder::memory_used() == 4 * sizeof(Chunk));
    check_seq(kob::this_thread(), 9, 3 * Chunk::kRecords + 5);
    CHECK(kob::this_thread().dropped() == 0);
  }).join();
}

TEST_CASE("recorder: records past the memory cap are dropped and counted") {
  RecorderReset reset;
  // A cap of 3 chunks and a bit: a 4th chunk does not fit.
  kob::recorder::set_memory_limit(3 * sizeof(Chunk) + sizeof(Chunk) - 1);
  ThreadBuffer* first = nullptr;
  std::thread([&] {
    first = &kob::this_thread();
    emit_seq(1, 3 * Chunk::kRecords + 100);
  }).join();
  CHECK(first->dropped() == 100);
  check_seq(*first, 1, 3 * Chunk::kRecords);  // everything up to the cap is intact
  CHECK(kob::recorder::memory_used() == 3 * sizeof(Chunk));
  CHECK(kob::recorder::dropped_total() == 100);

  // The cap is shared: a second thread gets no chunk at all.
  ThreadBuffer* second = nullptr;
  std::thread([&] {
    second = &kob::this_thread();
    emit_seq(2, 10);
  }).join();
  CHECK(second->record_count() == 0);
  CHECK(second->dropped() == 10);
  CHECK(kob::recorder::dropped_total() == 110);

  // Raising the cap lets a thread grow again.
  kob::recorder::set_memory_limit(5 * sizeof(Chunk));
  std::thread([&] { emit_seq(3, Chunk::kRecords + 1); }).join();
  const auto regd = kob::recorder::threads();
  REQUIRE(regd.size() == 3);
  CHECK(regd[2]->dropped() == 0);
  check_seq(*regd[2], 3, Chunk::kRecords + 1);
  CHECK(kob::recorder::memory_used() == 5 * sizeof(Chunk));
}

TEST_CASE("recorder: after close no chunk is allocated and nothing is counted") {
  RecorderReset reset;
  kob::recorder::close();
  CHECK(kob::recorder::closed());
  ThreadBuffer* b = nullptr;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(4, 10);
  }).join();
  CHECK(b->record_count() == 0);
  CHECK(b->dropped() == 0);
  CHECK(kob::recorder::memory_used() == 0);
}

TEST_CASE("recorder: reset_for_test forgets threads, counters and ids") {
  RecorderReset reset;
  std::thread([] { emit_seq(5, 3); }).join();
  kob::g_ids.kernel = 41;
  kob::g_ids.section = 3;
  kob::recorder::close();
  REQUIRE(kob::recorder::threads().size() == 1);
  kob::recorder::reset_for_test();
  CHECK(kob::recorder::threads().empty());
  CHECK(kob::recorder::memory_used() == 0);
  CHECK_FALSE(kob::recorder::closed());
  CHECK(kob::g_ids.kernel == 0);
  CHECK(kob::g_ids.section == 0);
  // The calling thread registers afresh, as index 0.
  CHECK(kob::this_thread().index == 0);
  CHECK(kob::recorder::threads().size() == 1);
}
