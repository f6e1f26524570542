// Per-thread ring buffers: concurrent filling through the raw trace, the memory cap over the
// rings, a process without a writer thread, unregistered (test) buffers.
#include <doctest/doctest.h>

#include <algorithm>
#include <latch>
#include <set>
#include <thread>

#include "common/record/raw_trace.hpp"
#include "common/record/raw_writer.hpp"
#include "common/record/record_fields.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/analysis/summary.hpp"
#include "helpers.hpp"

using kob::Record;
using kob::ThreadBuffer;
using kob_test::RecorderReset;
using kob::raw::kSlotBytes;
using kob::raw::kSlotRecords;

namespace {
using kob_test::emit_seq;

using kob_test::RawReset;

// The records are exactly emit_seq(tag, n)'s, in order.
// The records a buffer still holds in memory.
std::vector<Record> in_memory_records(const ThreadBuffer& b) {
  std::vector<Record> out;
  b.for_each([&](const Record& r) { out.push_back(r); });
  return out;
}

void check_seq(const std::vector<Record>& recs, std::uint64_t tag, std::uint64_t n) {
  CHECK(recs.size() == n);
  CHECK(kob_test::is_seq(recs, tag, n));
}

}  // namespace

TEST_CASE("recorder: 8 threads x 10000 records through the raw trace, each read back once and in order") {
  const std::string path = kob_test::temp_path("recorder-8.kob");
  const kob_test::RemoveAtEnd remove_file{path};
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  REQUIRE(kob::raw::open(path));
  constexpr int kThreads = 8;
  constexpr std::uint64_t kPerThread = 10'000;
  std::vector<ThreadBuffer*> own(kThreads, nullptr);
  std::vector<std::uint32_t> ring(kThreads, 0);
  std::latch registered(kThreads), go(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      own[t] = &kob::this_thread();
      registered.count_down();
      go.wait();  // all emit at the same time
      emit_seq(static_cast<std::uint64_t>(t), kPerThread);
      CHECK(&kob::this_thread() == own[t]);  // the same buffer for the life of the thread
      ring[t] = own[t]->ring_size();  // while it runs: at its end the ring goes to the pool
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
  for (int t = 0; t < kThreads; ++t) CHECK(ring[t] == kob::recorder::kDefaultRing);
  CHECK(indices.size() == kThreads);
  CHECK(tids.size() == kThreads);
  CHECK(kob::recorder::dropped_total() == 0);
  // The rings only (ended threads' rings stay counted, in the pool), however many records went
  // through them.
  CHECK(kob::recorder::memory_used() == kThreads * kob::recorder::kDefaultRing * kSlotBytes);
  REQUIRE(kob::raw::finish());
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(path, error));
  std::uint64_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(std::find(regd.begin(), regd.end(), own[t]) != regd.end());
    const std::vector<Record> recs = kob_test::raw_records(r, own[t]->index);
    check_seq(recs, static_cast<std::uint64_t>(t), kPerThread);
    total += recs.size();
  }
  CHECK(total == kThreads * kPerThread);
}

TEST_CASE("recorder: the memory cap gives later threads fewer slots (at least 2), then none (all dropped, counted)") {
  RawReset reset;
  kob::recorder::set_memory_limit(7 * kSlotBytes + kSlotBytes - 1);  // room for 4 + 3 slots
  std::vector<ThreadBuffer*> b(3, nullptr);
  for (int t = 0; t < 3; ++t) {
    std::thread([&, t] {
      b[t] = &kob::this_thread();
      emit_seq(static_cast<std::uint64_t>(t), 100);
    }).join();
  }
  CHECK(b[0]->ring_size() == 4);
  CHECK(b[1]->ring_size() == 3);
  CHECK(b[2]->ring_size() == 0);
  CHECK(kob::recorder::memory_used() == 7 * kSlotBytes);
  CHECK(b[0]->dropped() == 0);
  CHECK(b[1]->dropped() == 0);
  check_seq(in_memory_records(*b[1]), 1, 100);
  CHECK(b[2]->dropped() == 100);
  CHECK(b[2]->record_count() == 0);
  CHECK(kob::recorder::dropped_total() == 100);

  // A cap that leaves room for one slot only: none (a ring needs 2).
  kob::recorder::set_memory_limit(8 * kSlotBytes);
  std::thread([] { emit_seq(5, 3); }).join();
  CHECK(kob::recorder::threads()[3]->ring_size() == 0);
  CHECK(kob::recorder::dropped_total() == 103);
}

TEST_CASE("recorder: ring size, and without a writer a thread copies its own full slots") {
  const std::string path = kob_test::temp_path("recorder-nowriter.kob");
  const kob_test::RemoveAtEnd remove_file{path};
  RawReset reset;
  kob::recorder::set_ring_slots(2);
  REQUIRE(kob::raw::open(path));
  kob::raw::writer::stop();  // as in a fork child: no writer thread
  ThreadBuffer* b = nullptr;
  std::uint32_t ring = 0;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(4, 7 * kSlotRecords + 3);
    ring = b->ring_size();
  }).join();
  CHECK(ring == 2);
  CHECK(b->dropped() == 0);  // never waited, never dropped: each full slot copied at once
  // 7 full slots, and the last one, handed over and copied when the thread ended; its ring is
  // in the pool.
  CHECK(kob::raw::stats().chunks_written == 8);
  CHECK(b->ring_size() == 0);
  CHECK(kob::recorder::pooled_rings() == 1);
  REQUIRE(kob::raw::finish());
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(path, error));
  check_seq(kob_test::raw_records(r, b->index), 4, 7 * kSlotRecords + 3);
}

TEST_CASE("recorder: a buffer never registered records nothing, takes no memory and counts its drops") {
  RawReset reset;
  const std::uint64_t used = kob::recorder::memory_used();
  ThreadBuffer b;
  for (std::uint64_t i = 0; i < 100; ++i) b.emit([&](Record& r) { r.tick = 1000 + i; });
  CHECK(b.dropped() == 100);
  CHECK(in_memory_records(b).empty());
  CHECK(b.ring_size() == 0);
  CHECK(kob::recorder::memory_used() == used);
}

TEST_CASE("recorder: after close no slot is taken and nothing is counted") {
  RawReset reset;
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
  RawReset reset;
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

TEST_CASE("recorder: a record stays open to completion in place only while it is the thread's last one") {
  const std::string path = kob_test::temp_path("recorder-open.kob");
  const kob_test::RemoveAtEnd remove_file{path};
  RawReset reset;
  kob::recorder::set_ring_slots(2);
  REQUIRE(kob::raw::open(path));
  kob::raw::writer::stop();  // each full slot copied at once: the ring comes round without waiting
  bool last_at_first = false, last_after_another = true, same_place = false, old_still_last = true, new_still_last = false;
  std::thread([&] {
    ThreadBuffer& b = kob::this_thread();
    auto fill = [](Record& r) {
      r.tick = 5;
      r.type = kob::Ev::OmpSyncBegin;
    };
    Record* first = b.emit_open(fill);
    const std::uint64_t first_seq = b.slot_seq();
    last_at_first = b.still_last(first, first_seq);
    emit_seq(1, 1);
    last_after_another = b.still_last(first, first_seq);
    // Round the ring of 2 slots: the next record lands where `first` was, in a later chunk.
    emit_seq(1, 2 * kSlotRecords - 2);
    Record* again = b.emit_open(fill);
    same_place = again == first;
    old_still_last = b.still_last(first, first_seq);
    new_still_last = b.still_last(again, b.slot_seq());
  }).join();
  CHECK(last_at_first);
  CHECK_FALSE(last_after_another);
  CHECK(same_place);
  CHECK_FALSE(old_still_last);  // the same address, but another chunk: not the record it was
  CHECK(new_still_last);
  REQUIRE(kob::raw::finish());
}

TEST_CASE("recorder: a thread whose next slot the writer has not copied copies its own slots: nothing dropped, each flush a span") {
  const std::string path = kob_test::temp_path("recorder-flush.kob");
  const kob_test::RemoveAtEnd remove_file{path};
  RawReset reset;
  REQUIRE(kob::raw::open(path));
  constexpr std::uint32_t kRing = 2;
  kob::recorder::set_ring_slots(kRing);
  kob::raw::writer::pause_for_test(true);  // the writer gets no core: it copies nothing
  constexpr std::uint64_t kN = 7 * kSlotRecords + 5;
  ThreadBuffer* b = nullptr;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(5, kN);
  }).join();
  kob::raw::writer::pause_for_test(false);
  // The first ring fills without a copy; from then on the thread copies the whole ring each time
  // it comes round, and the flush's own record takes one place in the slot it then fills.
  const std::uint64_t later = kN - kRing * kSlotRecords;
  const std::uint64_t flushes = (later + kRing * kSlotRecords - 2) / (kRing * kSlotRecords - 1);
  CHECK(flushes == 3);
  CHECK(b->dropped() == 0);
  CHECK(b->flushes() == flushes);
  REQUIRE(kob::raw::finish());
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(path, error));
  std::vector<Record> own, flush;
  for (const Record& x : kob_test::raw_records(r, b->index)) (x.type == kob::Ev::ToolFlush ? flush : own).push_back(x);
  check_seq(own, 5, kN);  // every event, in order
  REQUIRE(flush.size() == flushes);
  for (const Record& f : flush) CHECK(kob::fields::ToolFlush::records.get(f) == kRing * kSlotRecords);
  // On the timeline: a span per flush on the thread's track, counted per thread in the summary.
  const kob::Timeline t = kob::build_timeline(r.threads(), -1, r.complete());
  CHECK(t.tool_flushes.size() == flushes);
  REQUIRE(t.tracks.size() == 1);
  CHECK(t.tracks[0].tool_flushes == flushes);
  const kob::Summary s = kob::summarize(t);
  CHECK(s.tool.flushes == flushes);
  REQUIRE(s.tool.threads.size() == 1);
  CHECK(s.tool.threads[0].flushes == flushes);
  CHECK(s.tool.flush_ns == t.tracks[0].tool_flush_ns);
  CHECK(s.dropped == 0);
}
