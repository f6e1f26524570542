// The conversion's decoder (common/record/event_decoder.hpp): a chunk's bytes made events in one
// pass must be what the codec's records, unfolded (record_fold.hpp), put on the thread's time line
// and nudged would be: the same fields, the same ns, one event per unfolded record.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "common/record/event_decoder.hpp"
#include "common/record/record_codec.hpp"
#include "common/record/record_fold.hpp"
#include "helpers.hpp"

using kob::Ev;
using kob::Event;
using kob::EventChunk;
using kob::EventDecoder;
using kob::Record;
using kob_test::declared_only;

namespace {

// 2.5 ticks per ns from tick 1000 at ns 5000: a line that is not the identity.
kob::clock::Line test_line() {
  kob::clock::Line l;
  l.tsc = true;
  l.tick0 = 1000;
  l.ns0 = 5000;
  l.whole = 0;
  l.frac = 0x6666666666666666ull;  // 0.4 ns per tick
  return l;
}

// The rule as the merge applied it before the decoder did (one record at a time).
struct ReferenceTimes {
  kob::clock::Line line;
  std::uint64_t last_ns = 0;
  bool any = false, nudged = false;
  static bool begins_inner_span(Ev t) {
    switch (t) {
      case Ev::KernelBegin:
      case Ev::FenceBegin:
      case Ev::DeepCopyBegin:
      case Ev::OmpWorkBegin:
      case Ev::OmpMaskedBegin:
      case Ev::OmpMutexAcquire:
      case Ev::OmpMutexAcquired:
      case Ev::OmpNestLock:
      case Ev::OmpTaskSchedule:
      case Ev::OmpTargetBegin: return true;
      default: return false;
    }
  }
  std::uint64_t at(const Record& r) {
    const std::uint64_t t = line.to_ns(r.tick);
    if (r.type == Ev::OmpDeviceRecord || r.type == Ev::ToolFlush) return t;
    const bool later = any && t <= last_ns;
    std::uint64_t ns = t;
    nudged = later && (nudged || begins_inner_span(r.type));
    if (nudged) ns = last_ns + 1;
    last_ns = ns;
    any = true;
    return ns;
  }
};

struct Expected {
  Record r;  // unfolded; a flush's length in ns
  std::uint64_t ns;
};

std::vector<Expected> expected_of(const std::vector<Record>& recs, ReferenceTimes& times) {
  std::vector<Record> all = recs;
  all.resize(kob::fold::unfold_all(all, all.size()));
  std::vector<Expected> out;
  for (const Record& r : all) {
    Expected e{r, times.at(r)};
    // A sync region's steps keep sub, a, u0 and u1 (the code address is the begin's).
    if (r.type == Ev::OmpSyncWaitBegin || r.type == Ev::OmpSyncWaitEnd || r.type == Ev::OmpSyncEnd)
      for (int k = 2; k < 6; ++k) e.r.u[k] = 0;
    if (r.type == Ev::ToolFlush) {
      using F = kob::fields::ToolFlush;
      F::ticks.set(e.r, times.line.to_ns(r.tick + F::ticks.get(r)) - times.line.to_ns(r.tick));
    }
    out.push_back(e);
  }
  return out;
}

std::vector<const Event*> events_of(const EventChunk& c) {
  std::vector<const Event*> out;
  for (const Event* e = c.begin(); e < c.end(); e = e->next()) out.push_back(e);
  return out;
}

void check_same(const std::vector<const Event*>& got, const std::vector<Expected>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Record r = got[i]->record(want[i].r.tick);
    const Record& w = want[i].r;
    INFO("event " << i << " type " << static_cast<int>(w.type));
    CHECK(got[i]->ns == want[i].ns);
    CHECK(r.type == w.type);
    CHECK(r.sub == w.sub);
    CHECK(r.a == w.a);
    for (int k = 0; k < 6; ++k) CHECK(r.u[k] == w.u[k]);
  }
}

// Random records of every type, with ticks that tie and run backwards often (the nudge), folded
// sync regions, flushes and device records among them.
std::vector<Record> random_stream(std::mt19937_64& rng, std::size_t n) {
  std::vector<Record> out;
  std::uint64_t t = 1u << 20;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned pick = rng() % 4;
    t += pick == 0 ? rng() % 100000 : pick == 1 ? 0 : pick == 2 ? rng() % 3 : static_cast<std::uint64_t>(-static_cast<std::int64_t>(rng() % 3));
    Record r = kob_test::rec(t, static_cast<Ev>(1 + rng() % (static_cast<int>(Ev::OmpLast) - 1)), rng() & 0xffffffffu, {},
                             static_cast<std::uint16_t>(rng() & 0xffff));
    for (auto& u : r.u) u = (rng() & 1) ? rng() : rng() % 10;
    if (r.type == Ev::OmpSyncBegin && (rng() & 1)) {
      using S = kob::fields::OmpSync;
      S::wait_begin_step.set(r, rng() % 4);
      S::wait_end_step.set(r, rng() % 4);
      S::end_step.set(r, rng() % 4);
    }
    out.push_back(declared_only(r));
  }
  return out;
}

std::vector<std::uint8_t> encoded(const std::vector<Record>& recs, std::uint64_t base) {
  std::vector<std::uint8_t> buf(recs.size() * kob::codec::kMaxRecordBytes + 1);
  buf.resize(kob::codec::encode(recs.data(), recs.size(), base, buf.data()));
  return buf;
}

}  // namespace

TEST_CASE("event decoder: chunks decoded in order give the unfolded records, on the time line, nudged across chunks") {
  std::mt19937_64 rng(7);
  const std::vector<Record> all = random_stream(rng, 6000);
  ReferenceTimes ref{test_line()};
  const std::vector<Expected> want = expected_of(all, ref);
  REQUIRE(want.size() > all.size());  // some folded regions unfolded

  EventDecoder decoder(test_line());
  std::vector<const Event*> got;
  std::vector<EventChunk> chunks(6);
  for (std::size_t c = 0; c < 6; ++c) {
    const std::vector<Record> part(all.begin() + c * 1000, all.begin() + (c + 1) * 1000);
    const std::vector<std::uint8_t> bytes = encoded(part, part[0].tick);
    CHECK(decoder.decode(bytes.data(), bytes.size(), part.size(), part[0].tick, chunks[c]) == part.size());
    for (const Event* e : events_of(chunks[c])) got.push_back(e);
  }
  check_same(got, want);
}

TEST_CASE("event decoder: with SyncSteps::InBegin a folded sync begin holds its steps' times, the other events unchanged") {
  std::mt19937_64 rng(19);
  const std::vector<Record> all = random_stream(rng, 4000);
  EventDecoder unfold(test_line());
  EventDecoder in_begin(test_line(), EventDecoder::SyncSteps::InBegin);
  const std::vector<std::uint8_t> bytes = encoded(all, all[0].tick);
  EventChunk a, b;
  REQUIRE(unfold.decode(bytes.data(), bytes.size(), all.size(), all[0].tick, a) == all.size());
  REQUIRE(in_begin.decode(bytes.data(), bytes.size(), all.size(), all[0].tick, b) == all.size());
  const std::vector<const Event*> ea = events_of(a), eb = events_of(b);
  REQUIRE(eb.size() == all.size());  // one event per record
  std::size_t j = 0, folded = 0, steps = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    REQUIRE(j < ea.size());
    INFO("record " << i);
    CHECK(eb[i]->ns == ea[j]->ns);
    CHECK(eb[i]->type == ea[j]->type);
    CHECK(eb[i]->u0 == ea[j]->u0);
    CHECK(eb[i]->u1 == ea[j]->u1);
    ++j;
    if (all[i].type != Ev::OmpSyncBegin) continue;
    using S = kob::fields::OmpSync;
    const std::uint64_t s[3] = {S::wait_begin_step.get(all[i]), S::wait_end_step.get(all[i]), S::end_step.get(all[i])};
    folded += (s[0] | s[1] | s[2]) != 0;
    for (int k = 0; k < 3; ++k) {
      const std::uint64_t t = eb[i]->wide_slots()[1 + k];
      if (s[k] == 0) {
        CHECK(t == kob::kNoStep);
        continue;
      }
      REQUIRE(j < ea.size());
      CHECK(t == ea[j]->ns);  // the unfolded step's time, nudged alike
      ++j;
      ++steps;
    }
  }
  CHECK(j == ea.size());
  CHECK(folded > 20);
  CHECK(steps > folded);
}

TEST_CASE("event decoder: records already in memory (a ring chunk) make the same events") {
  std::mt19937_64 rng(11);
  const std::vector<Record> all = random_stream(rng, 3000);
  ReferenceTimes ref{test_line()};
  const std::vector<Expected> want = expected_of(all, ref);
  EventDecoder decoder(test_line());
  EventChunk a, b;
  decoder.append(all.data(), 1500, a);
  decoder.append(all.data() + 1500, 1500, b);
  std::vector<const Event*> got = events_of(a);
  for (const Event* e : events_of(b)) got.push_back(e);
  check_same(got, want);
}

TEST_CASE("event decoder: a tie nudges a kernel begin 1 ns past the record before it, and the records after it") {
  using kob_test::rec;
  const std::vector<Record> recs = {rec(2000, Ev::RegionPush, 0, {1}), rec(2000, Ev::KernelBegin, 3, {9, 0}),
                                    rec(1995, Ev::KernelEnd, 0, {9}), rec(2500, Ev::RegionPop, 0, {})};
  const kob::clock::Line line{};  // identity: ns = ticks
  EventDecoder decoder(line);
  EventChunk c;
  decoder.append(recs.data(), recs.size(), c);
  const auto ev = events_of(c);
  REQUIRE(ev.size() == 4);
  CHECK(ev[0]->ns == 2000);
  CHECK(ev[1]->ns == 2001);  // the begin, nudged
  CHECK(ev[2]->ns == 2002);  // the end after it, still nudged (its own time is earlier)
  CHECK(ev[3]->ns == 2500);  // later again: its own time
  CHECK(kob::fields::Kernel::id.get(*ev[1]) == 9);
  CHECK(kob::fields::Kernel::id.get(*ev[2]) == 9);
  CHECK_FALSE(ev[1]->wide());
}

TEST_CASE("event decoder: a folded barrier takes two cells for its begin and one for each step") {
  using kob_test::rec;
  using S = kob::fields::OmpSync;
  Record b = rec(1000, Ev::OmpSyncBegin, 0, {7, 3, 0xc0de}, 1);
  S::wait_begin_step.set(b, kob::fold::step(1010, 1000));
  S::wait_end_step.set(b, kob::fold::step(1500, 1010));
  S::end_step.set(b, kob::fold::step(1520, 1500));
  const std::vector<Record> recs = {b, rec(1600, Ev::OmpImplicitTaskEnd, 0, {7, 3})};
  const std::vector<std::uint8_t> bytes = encoded(recs, 1000);
  EventDecoder decoder(kob::clock::Line{});
  EventChunk c;
  REQUIRE(decoder.decode(bytes.data(), bytes.size(), recs.size(), 1000, c) == 2);
  CHECK(c.used == 2 + 3 + 1);
  const auto ev = events_of(c);
  REQUIRE(ev.size() == 5);
  const Ev types[] = {Ev::OmpSyncBegin, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd, Ev::OmpSyncEnd, Ev::OmpImplicitTaskEnd};
  const std::uint64_t ns[] = {1000, 1010, 1500, 1520, 1600};
  for (int i = 0; i < 5; ++i) {
    CHECK(ev[i]->type == types[i]);
    CHECK(ev[i]->ns == ns[i]);
    CHECK(S::parallel_id.get(*ev[i]) == 7);
    CHECK(S::kernel.get(*ev[i]) == 3);
  }
  CHECK(S::codeptr.get(*ev[0]) == 0xc0de);
  CHECK(S::kind.get(*ev[3]) == 1);
  CHECK(S::end_step.get(*ev[0]) == 0);
}

TEST_CASE("event decoder: a chunk cut short gives the records the codec decodes from it, and no more") {
  std::mt19937_64 rng(3);
  const std::vector<Record> recs = random_stream(rng, 200);
  std::vector<std::uint8_t> bytes = encoded(recs, recs[0].tick);
  const std::size_t size = bytes.size();
  // Room to read past any cut (readable_after): the bytes there are the block's own, the rest of
  // a record cut short among them, and zeros after the block.
  bytes.resize(size + kob::codec::kMaxRecordBytes);
  std::vector<std::size_t> cuts = {0, 1, size / 3};
  for (std::size_t k = 1; k <= 2 * kob::codec::kMaxRecordBytes && k <= size; ++k) cuts.push_back(size - k);
  std::size_t cut_records = 0;
  for (const std::size_t cut : cuts) {
    CAPTURE(cut);
    std::size_t codec_n = 0;
    std::vector<Record> decoded;
    codec_n = kob::codec::decode(bytes.data(), cut, recs.size(), recs[0].tick, [&](const Record& r) { decoded.push_back(r); });
    cut_records += codec_n < recs.size();
    for (const std::size_t readable_after : {std::size_t{0}, kob::codec::kMaxRecordBytes}) {
      CAPTURE(readable_after);
      EventDecoder decoder(test_line(), EventDecoder::SyncSteps::Unfold);
      EventChunk c;
      CHECK(decoder.decode(bytes.data(), cut, recs.size(), recs[0].tick, c, readable_after) == codec_n);
      ReferenceTimes ref{test_line()};
      check_same(events_of(c), expected_of(decoded, ref));
      // The place on the line is the cut chunk's: the whole block again goes on from it.
      EventChunk again;
      CHECK(decoder.decode(bytes.data(), size, recs.size(), recs[0].tick, again, readable_after) == recs.size());
      check_same(events_of(again), expected_of(recs, ref));
    }
  }
  CHECK(cut_records == cuts.size());  // every cut ends inside the block's records
}

TEST_CASE("event decoder: a record of no known type in the middle of a block ends the block there") {
  std::mt19937_64 rng(23);
  std::vector<Record> all = random_stream(rng, 400);
  // Record 100 carries no field, so the bytes after its head are record 101's: a reader that went
  // on past the bad head would find whole records there and count them.
  all[100] = kob_test::rec(all[99].tick + 1, Ev::RegionPop, 0, {});
  const std::vector<std::uint8_t> whole = encoded(all, all[0].tick);
  // The coding is sequential: the first 100 records' bytes are a prefix of the whole block's, so
  // record 100's head (its type byte first) starts where they end, far from the block's end.
  const std::vector<Record> first(all.begin(), all.begin() + 100);
  const std::size_t at = encoded(first, all[0].tick).size();
  REQUIRE(at + kob::codec::kMaxRecordBytes < whole.size());
  for (const std::uint8_t bad : {std::uint8_t{0}, std::uint8_t{200}}) {
    CAPTURE(int(bad));
    std::vector<std::uint8_t> bytes = whole;
    bytes[at] = bad;
    for (const auto mode : {EventDecoder::SyncSteps::Unfold, EventDecoder::SyncSteps::InBegin}) {
      EventDecoder decoder(test_line(), mode);
      EventChunk c;
      CHECK(decoder.decode(bytes.data(), bytes.size(), all.size(), all[0].tick, c) == 100);
    }
    std::size_t seen = 0;
    CHECK(kob::codec::decode(bytes.data(), bytes.size(), all.size(), all[0].tick, [&](const Record&) { ++seen; }) == 100);
    CHECK(seen == 100);
  }
}
