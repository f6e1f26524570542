// The raw trace reader on files written by hand (raw_test_writer.hpp, docs/raw-format.md):
// header checks, the chunk index (COMPACT, RING slots, duplicates, order), META, a cut tail, and
// what build_timeline and the summary make of a run cut short or with lost stretches.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/analysis/summary.hpp"
#include "helpers.hpp"
#include "raw_test_writer.hpp"

using kob::Ev;
using kob::Record;
using kob_test::RawTraceWriter;
using kob_test::RecorderReset;
using kob_test::rec;

namespace {

// n records of thread `tag`: ProfileEvent with u0 = tag * 1000000 + k, tick = 10 * k + offset.
std::vector<Record> numbered(std::uint64_t tag, std::uint64_t from, std::uint64_t n) {
  std::vector<Record> v;
  for (std::uint64_t k = from; k < from + n; ++k) v.push_back(rec(10 * k + 5, Ev::ProfileEvent, 7, {tag * 1000000 + k, k * k}));
  return v;
}

struct TempFile {
  std::string path = kob_test::temp_path("raw" + std::to_string(counter()++) + ".kob");
  ~TempFile() { std::filesystem::remove(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::vector<Record> all_records(const kob::ThreadSource& t) {
  std::vector<Record> out;
  t.for_each([&](const Record& r) { out.push_back(r); });
  return out;
}

bool open_fails_with(const std::vector<std::uint8_t>& bytes, const std::string& part) {
  TempFile f;
  {
    std::FILE* out = std::fopen(f.path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
  }
  kob::raw::Reader r;
  std::string error;
  const bool ok = r.open(f.path, error);
  INFO(error);
  return !ok && error.find(part) != std::string::npos && error.find(f.path) != std::string::npos &&
         error.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("raw reader: a header that is not ours gives one line naming the file and the cause") {
  RawTraceWriter w;
  std::vector<std::uint8_t> good = w.bytes();
  CHECK(open_fails_with(std::vector<std::uint8_t>(good.begin(), good.begin() + 100), "shorter than its 4096-byte header"));
  auto bad_magic = good;
  bad_magic[0] = 'X';
  CHECK(open_fails_with(bad_magic, "no KOBRAW magic"));
  auto other_order = good;
  std::swap(other_order[20], other_order[23]);
  std::swap(other_order[21], other_order[22]);
  CHECK(open_fails_with(other_order, "another byte order"));
  auto v3 = good;  // before the 5-byte record head and the sync steps coded as values
  v3[8] = 3;
  CHECK(open_fails_with(v3, "format version 3; this kob reads version 4"));
  auto v5 = good;
  v5[8] = 5;
  CHECK(open_fails_with(v5, "format version 5; this kob reads version 4"));
  auto rec_size = good;
  rec_size[16] = 32;
  CHECK(open_fails_with(rec_size, "unexpected header or record size"));
  kob::raw::Reader r;
  std::string error;
  CHECK_FALSE(r.open("/nonexistent/dir/x.kob", error));
  CHECK(error.find("cannot open /nonexistent/dir/x.kob: No such file or directory") == 0);
}

TEST_CASE("raw reader: chunks by sequence number, COMPACT and RING, the larger copy of a seq wins") {
  RawTraceWriter w;
  // Thread 0: seq 2 before seq 1 on disk; seq 3 only in a ring slot being filled, with two records
  // past its (lazily published) `committed`: one complete (read), then one cut short by the end of
  // the process (a type but no tick yet: not read, nor anything after it).
  w.compact(0, 2, numbered(0, 100, 50));
  w.compact(0, 1, numbered(0, 0, 100));
  std::vector<Record> slot3 = numbered(0, 150, 10);
  slot3[8].tick = 0;
  w.ring(0, 3, 1, 7, slot3);
  // Thread 1: seq 1 both as COMPACT (5 records) and as a full slot with 9 committed: the slot's 9.
  // seq 2: a slot with 3 committed and a COMPACT copy with 6: the COMPACT.
  w.compact(1, 1, numbered(1, 0, 5));
  w.ring(1, 1, 2, 9, numbered(1, 0, 9));
  w.ring(1, 2, 2, 3, numbered(1, 9, 3));
  w.compact(1, 2, numbered(1, 9, 6));
  // Slots that hold nothing to read: free (state 0), never used (seq 0).
  w.ring(1, 3, 0, 5, numbered(1, 15, 5));
  w.ring(2, 0, 1, 5, numbered(2, 0, 5));
  TempFile f;
  REQUIRE(w.write(f.path));

  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  CHECK_FALSE(r.complete());
  CHECK(r.cut_tail_bytes() == 0);
  const auto threads = r.threads();
  REQUIRE(threads.size() == 1 + 1);  // thread 2's only slot was never used
  CHECK(threads[0]->index == 0);
  CHECK(threads[1]->index == 1);
  CHECK(r.total_records() == 158 + 15);

  std::vector<std::uint64_t> progress;
  r.on_progress = [&](std::uint64_t done, std::uint64_t total) {
    CHECK(total == 173);
    progress.push_back(done);
  };
  const std::vector<Record> t0 = all_records(*threads[0]);
  REQUIRE(t0.size() == 158);
  for (std::size_t k = 0; k < t0.size(); ++k) {
    CAPTURE(k);
    CHECK(t0[k].u[0] == k);
    CHECK(t0[k].u[1] == k * k);
    CHECK(t0[k].tick == 10 * k + 5);
    CHECK(t0[k].type == Ev::ProfileEvent);
    CHECK(t0[k].a == 7);
  }
  const std::vector<Record> t1 = all_records(*threads[1]);
  REQUIRE(t1.size() == 15);
  for (std::size_t k = 0; k < t1.size(); ++k) CHECK(t1[k].u[0] == 1000000 + k);

  CHECK(progress == std::vector<std::uint64_t>{100, 150, 158, 167, 173});  // after each chunk

  // With END the writer had copied every slot: the slots are not read (what a thread adds to its
  // slot after END is not part of the run), only the COMPACT blocks.
  w.end(2000);
  TempFile f2;
  REQUIRE(w.write(f2.path));
  kob::raw::Reader ended;
  REQUIRE(ended.open(f2.path, error));
  CHECK(ended.complete());
  CHECK(ended.end_tick() == 2000);
  REQUIRE(ended.threads().size() == 2);
  CHECK(all_records(*ended.threads()[0]).size() == 150);
  const std::vector<Record> e1 = all_records(*ended.threads()[1]);
  REQUIRE(e1.size() == 11);
  for (std::size_t k = 0; k < e1.size(); ++k) CHECK(e1[k].u[0] == 1000000 + (k < 5 ? k : k + 4));  // seq 1: 0..4, seq 2: 9..14
}

TEST_CASE("raw reader: META names, threads (last wins), KV, LOST; END absent") {
  RecorderReset reset;
  RawTraceWriter w;
  const auto base = static_cast<std::uint32_t>(kob::names().size());
  w.name(base + 3, "rr_kernel_from_file");
  w.name(base + 1, "rr_other");
  w.thread(0, 111, 0);
  w.kv("meta", "k1", "v1");
  w.kv("kob", "exe", "prog");
  w.compact(0, 1, {rec(100, Ev::KernelBegin, base + 3, {1, 0x01000000})});
  w.thread(0, 222, 2, 3, 1);
  w.kv("kob", "exe", "prog2");
  w.lost(0, 1, 150, 190, 40);
  w.lost(0, 3, 300, 390, 60);
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  CHECK_FALSE(r.complete());
  REQUIRE(r.threads().size() == 1);
  const kob::ThreadSource& t = *r.threads()[0];
  CHECK(t.os_tid == 222);
  CHECK(t.omp_thread_type == 2);
  CHECK(t.omp_proc == 3);
  CHECK(t.omp_place == 1);
  CHECK(t.dropped == 100);
  REQUIRE(t.losses.size() == 2);
  CHECK(t.losses[1].first_tick == 300);
  CHECK(t.losses[1].last_tick == 390);
  CHECK(t.losses[1].events == 60);
  CHECK(t.losses[1].reason == kob::LossReason::TraceSizeCap);
  REQUIRE(r.kv().size() == 3);
  CHECK(r.kv_value("kob", "exe") == "prog2");
  CHECK(r.kv_value("meta", "k1") == "v1");
  CHECK(r.kv_value("meta", "nope", "dflt") == "dflt");

  r.load_names();
  CHECK(std::string(kob::names().str(base + 3)) == "rr_kernel_from_file");
  CHECK(std::string(kob::names().str(base + 1)) == "rr_other");
  CHECK(std::string(kob::names().str(base)) == "<name " + std::to_string(base) + " not in the raw trace>");
  CHECK(std::string(kob::names().str(base + 2)) == "<name " + std::to_string(base + 2) + " not in the raw trace>");
  CHECK(kob::names().intern("rr_kernel_from_file") == base + 3);  // the table finds it by text too
}

TEST_CASE("raw reader: a write cut short ends the walk; what came before is read") {
  RawTraceWriter w;
  w.compact(0, 1, numbered(0, 0, 20));
  w.name(5, "x");
  w.cut_tail(100);
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  CHECK(r.cut_tail_bytes() == 148);
  CHECK_FALSE(r.complete());
  REQUIRE(r.threads().size() == 1);
  CHECK(all_records(*r.threads()[0]).size() == 20);
  CHECK(r.names().size() == 1);

  RawTraceWriter g;  // a bad magic after a good block
  g.compact(3, 1, numbered(3, 0, 4));
  g.garbage(500);
  g.end(99);  // never reached
  TempFile f2;
  REQUIRE(g.write(f2.path));
  kob::raw::Reader r2;
  REQUIRE(r2.open(f2.path, error));
  CHECK(r2.cut_tail_bytes() > 500);
  CHECK_FALSE(r2.complete());
  REQUIRE(r2.threads().size() == 1);
  CHECK(r2.threads()[0]->index == 3);
  CHECK(all_records(*r2.threads()[0]).size() == 4);
}

TEST_CASE("raw reader: ticks to ns through the start point and the last CALIB") {
  RecorderReset reset;
  RawTraceWriter::Start start;
  start.clock = 1;
  start.tick = 1000;
  start.ns = 5000;
  RawTraceWriter w(start);
  w.calib(1600, 5200);  // superseded
  w.calib(3000, 6000);  // 2 ticks per ns
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  std::uint64_t tick0 = 0, ns0 = 0;
  double rate = 0;
  CHECK(r.clock_line(tick0, ns0, rate));
  CHECK(tick0 == 1000);
  CHECK(ns0 == 5000);
  CHECK(rate == doctest::Approx(2.0));
  r.apply_clock();
  CHECK(kob::clock::to_ns(2000) == 5500);
  CHECK(kob::clock::to_ns(5000) == 7000);

  RawTraceWriter ns_clock;  // clock 0: ticks are ns
  TempFile f2;
  REQUIRE(ns_clock.write(f2.path));
  kob::raw::Reader r2;
  REQUIRE(r2.open(f2.path, error));
  r2.apply_clock();
  CHECK(kob::clock::to_ns(123456) == 123456);
}

TEST_CASE("raw reader: a run cut short: open spans end at their thread's last event, marked cut") {
  RecorderReset reset;
  const std::uint32_t k = kob_test::nm("rr_cut_kernel"), reg = kob_test::nm("rr_cut_region");
  RawTraceWriter w;
  w.thread(0, 500, 0);
  w.thread(1, 501, 0);
  w.compact(0, 1,
            {rec(100, Ev::RegionPush, reg), rec(110, Ev::KernelBegin, k, {1, 0x01000000}), rec(120, Ev::KernelEnd, 0, {1}),
             rec(130, Ev::KernelBegin, k, {2, 0x01000000})});
  w.ring(0, 2, 1, 1, {rec(150, Ev::ProfileEvent, k)});  // the thread's last event
  w.compact(1, 1, {rec(105, Ev::ProfileEvent, k), rec(400, Ev::ProfileEvent, k)});
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  REQUIRE_FALSE(r.complete());
  const kob::Timeline t = kob::build_timeline(r.threads(), -1, r.complete());
  CHECK(t.cut_short);
  CHECK(t.cut_spans == 2);
  REQUIRE(t.kernels.size() == 2);
  CHECK_FALSE(t.kernels[0].cut);
  CHECK(t.kernels[0].end == 120);
  CHECK(t.kernels[1].cut);
  CHECK(t.kernels[1].end == 150);  // not 400, the run's last event (on thread 1)
  REQUIRE(t.regions.size() == 1);
  CHECK(t.regions[0].cut);
  CHECK(t.regions[0].end == 150);
  bool noted = false;
  for (const auto& p : t.problems)
    noted = noted || p == "a Kokkos kernel never ended: cut at its thread's last event (the run did not end cleanly) (1 time)";
  CHECK(noted);

  std::uint64_t clipped = 0;
  const std::string trace = kob_test::chrome_trace_text(t, &clipped);
  CHECK(kob_test::python_json_check(trace, R"PY(
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
cut = sorted((e["cat"], e["args"].get("id", 0)) for e in x if e["args"].get("cut") is True)
assert cut == [("kokkos.kernel", 2), ("kokkos.region", 0)], cut
assert len([e for e in x if "cut" not in e["args"]]) == 1
)PY") == 0);

  const kob::Summary s = kob::summarize(t);
  CHECK(s.cut_short);
  CHECK(s.cut_spans == 2);
  const std::string text = kob::summary_text(s, "unit");
  CHECK(text.find("cut short: the run ended without a clean exit; 2 spans still open then end at their thread's last event") !=
        std::string::npos);
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
assert d["cut_short"] is True and d["cut_spans"] == 2
)PY") == 0);

  // The same records with END: shown until the end of the run, nothing cut.
  const kob::Timeline clean = kob::build_timeline(r.threads(), -1, true);
  CHECK(clean.cut_spans == 0);
  REQUIRE(clean.kernels.size() == 2);
  CHECK_FALSE(clean.kernels[1].cut);
  CHECK(clean.kernels[1].end == 400);
}

TEST_CASE("raw reader: lost stretches reach the timeline and the summary names them") {
  RecorderReset reset;
  const std::uint32_t k = kob_test::nm("rr_lost_kernel");
  RawTraceWriter w;
  w.thread(0, 700, 0);
  w.thread(1, 701, 0);
  w.compact(0, 1, {rec(1000, Ev::KernelBegin, k, {1, 0x01000000}), rec(2000, Ev::KernelEnd, 0, {1})});
  w.lost(0, 1, 3000, 5000, 4094);
  w.compact(0, 3, {rec(6000, Ev::KernelBegin, k, {2, 0x01000000}), rec(7000, Ev::KernelEnd, 0, {2})});
  w.compact(1, 1, {rec(1500, Ev::ProfileEvent, k), rec(9000, Ev::ProfileEvent, k)});
  w.end(10000);
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  kob::Timeline t = kob::build_timeline(r.threads(), -1, r.complete());
  t.run_end = 10000;
  CHECK(t.dropped == 4094);
  REQUIRE(t.lost.size() == 1);
  CHECK(t.lost[0].track == 0);
  CHECK(t.lost[0].start == 3000);
  CHECK(t.lost[0].end == 5000);
  CHECK(t.kernels.size() == 2);  // recorded again after the loss
  const kob::Summary s = kob::summarize(t);
  CHECK(s.coverage.complete_until == 2000);  // from the first event (t0 = 1000)
  const std::string text = kob::summary_text(s, "unit");
  INFO(text);
  CHECK(text.find("INCOMPLETE: 4094 events lost; the figures hold every event only until 2000 ns of 9000 ns and miss these stretches:\n"
                  "  thread 0 (os tid 700): 4094 events lost from 2000 ns to 4000 ns (ring full (the writer thread fell behind))\n") !=
        std::string::npos);
  CHECK(kob::dropped_line(s, 64) ==
        "4094 events lost in 1 stretches (first: thread 0, 2000 ns to 4000 ns, ring full (the writer thread fell behind)); the "
        "summary lists them");
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
c = d["coverage"]
assert c["lost"] == [{"track": 0, "os_tid": 700, "from_ns": 2000, "to_ns": 4000, "events": 4094,
                      "reason": "ring full (the writer thread fell behind)"}], c
assert c["complete"] is False and c["dropped_events"] == 4094
)PY") == 0);
}

TEST_CASE("raw reader: counts the file cannot back are refused and named by their byte") {
  RawTraceWriter w;
  const std::size_t compact_at = w.bytes().size();
  w.compact(0, 1, numbered(0, 0, 20));
  w.name(0xfffffff0u, "far");  // an id no file of one name gives
  const std::size_t kv_at = w.bytes().size();
  w.kv("kob", "exe", "prog");
  w.name(7, "kept");
  std::vector<std::uint8_t>& b = w.bytes();
  const std::uint32_t records = 0xffffffffu, string_length = 0x7fffffffu;
  std::memcpy(b.data() + compact_at + 24, &records, 4);            // the block's records
  std::memcpy(b.data() + kv_at + 48 + 8, &string_length, 4);       // the KV's section length
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  CHECK(r.damage().offset == compact_at + 24);  // the first of the three
  CHECK(r.damage().what.find("claims 4294967295 records") != std::string::npos);
  REQUIRE(r.threads().size() == 1);
  CHECK(all_records(*r.threads()[0]).size() == 20);  // what the bytes hold, nothing allocated for the claim
  CHECK(r.damaged_block_offset() == compact_at);
  CHECK(r.kv().empty());
  REQUIRE(r.names().size() == 1);
  CHECK(r.names()[0].first == 7);

  RawTraceWriter m;  // a META entry longer than its block
  m.name(3, "x");
  const std::size_t meta_at = m.bytes().size();
  m.kv("kob", "exe", "prog");
  const std::uint32_t long_entry = 0xffffffffu;
  std::memcpy(m.bytes().data() + meta_at + 48 + 4, &long_entry, 4);
  TempFile f2;
  REQUIRE(m.write(f2.path));
  kob::raw::Reader r2;
  REQUIRE(r2.open(f2.path, error));
  CHECK(r2.damage().offset == meta_at + 48);
  CHECK(r2.kv().empty());
  CHECK(r2.names().size() == 1);
}

TEST_CASE("raw reader: a ring slot cut by the end of the file gives the records before the cut") {
  RawTraceWriter w;
  w.ring(2, 1, 1, 0, numbered(2, 0, 100));
  const std::size_t slot_at = w.bytes().size() - 128 * 1024;
  w.bytes().resize(slot_at + 64 + 40 * sizeof(Record) + 10);  // 40 whole records, a piece of the 41st
  TempFile f;
  REQUIRE(w.write(f.path));
  kob::raw::Reader r;
  std::string error;
  REQUIRE(r.open(f.path, error));
  CHECK(r.cut_tail_offset() == slot_at);
  REQUIRE(r.threads().size() == 1);
  CHECK(all_records(*r.threads()[0]).size() == 40);
}

TEST_CASE("raw reader: chunks read through a window: threads interleaved, two files at once, a file cut after opening") {
  // Threads 0 and 1 take turns (their chunks share windows); later thread 2's chunks lie between
  // thread 3's large ones (each read alone), and 0's and 1's between them too.
  const auto layout = [](std::uint64_t salt) {
    RawTraceWriter w;
    for (std::uint64_t s = 1; s <= 40; ++s) {
      w.compact(0, s, numbered(salt + 0, 50 * (s - 1), 50));
      w.compact(1, s, numbered(salt + 1, 30 * (s - 1), 30));
      if (s > 30) {
        w.compact(2, s - 30, numbered(salt + 2, 10 * (s - 31), 10));
        w.compact(3, s - 30, numbered(salt + 3, 4000 * (s - 31), 4000));
      }
    }
    return w;
  };
  TempFile fa, fb;
  REQUIRE(layout(0).write(fa.path));
  REQUIRE(layout(10).write(fb.path));
  kob::raw::Reader a, b;
  std::string error;
  REQUIRE(a.open(fa.path, error));
  REQUIRE(b.open(fb.path, error));
  REQUIRE(a.threads().size() == 4);
  REQUIRE(b.threads().size() == 4);
  // Chunk by chunk, a's and b's threads in turn on this one thread: each file's own records.
  const std::uint64_t per[4] = {50, 30, 10, 4000};
  CHECK(a.threads()[2]->chunk_count() == 10);
  for (std::size_t t = 0; t < 4; ++t) {
    CAPTURE(t);
    const kob::ThreadSource& ta = *a.threads()[t];
    const kob::ThreadSource& tb = *b.threads()[t];
    REQUIRE(ta.chunk_count() == tb.chunk_count());
    std::vector<Record> ra, rb;
    for (std::size_t c = 0; c < ta.chunk_count(); ++c) {
      ta.read_chunk(c, ra);
      tb.read_chunk(c, rb);
      REQUIRE(ra.size() == per[t]);
      REQUIRE(rb.size() == per[t]);
      for (std::size_t k = 0; k < ra.size(); ++k) {
        const std::uint64_t n = c * per[t] + k;
        CHECK(ra[k].u[0] == t * 1000000 + n);
        CHECK(rb[k].u[0] == (t + 10) * 1000000 + n);
        CHECK(ra[k].tick == 10 * n + 5);
      }
    }
  }

  // The file cut short after it was opened, inside thread 0's third chunk: the first two are read
  // (a window reaching past the new end is given up for the chunk alone), the rest are lost.
  kob::raw::Reader cut;
  REQUIRE(cut.open(fa.path, error));
  const auto t0 = cut.threads()[0];
  // Where chunk 2 ends: the smallest copy of the file in which it reads whole.
  std::uintmax_t lo = 0, hi = std::filesystem::file_size(fa.path);
  while (lo + 1 < hi) {
    const std::uintmax_t mid = (lo + hi) / 2;
    std::filesystem::resize_file(fb.path, 0);
    std::filesystem::copy_file(fa.path, fb.path, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(fb.path, mid);
    kob::raw::Reader probe;
    std::vector<Record> got;
    if (probe.open(fb.path, error) && !probe.threads().empty() && probe.threads()[0]->chunk_count() > 2) {
      probe.threads()[0]->read_chunk(2, got);
    }
    (got.size() == 50 ? hi : lo) = mid;
  }
  std::filesystem::resize_file(fa.path, hi - 1);  // now: chunk 2's last byte is gone
  std::vector<Record> r;
  t0->read_chunk(0, r);
  CHECK(r.size() == 50);
  t0->read_chunk(1, r);
  CHECK(r.size() == 50);
  CHECK(r.back().u[0] == 99);
  t0->read_chunk(2, r);
  CHECK(r.empty());
  t0->read_chunk(3, r);
  CHECK(r.empty());
}

TEST_CASE("raw reader: a large file's second half walked by a helper: the same chunks; garbage there ends the walk") {
  // Over 8 MiB (two walkers): threads 0 and 1 in turn, 120 chunks of 4000 records each; then the
  // same with garbage after the 100th pair (in the second half, where the helper walks).
  const auto layout = [](bool with_garbage) {
    RawTraceWriter w;
    for (std::uint64_t s = 1; s <= 120; ++s) {
      w.compact(0, s, numbered(0, 4000 * (s - 1), 4000));
      w.compact(1, s, numbered(1, 4000 * (s - 1), 4000));
      if (with_garbage && s == 100) w.garbage(4096);
    }
    return w;
  };
  for (bool garbage : {false, true}) {
    CAPTURE(garbage);
    TempFile f;
    REQUIRE(layout(garbage).write(f.path));
    REQUIRE(std::filesystem::file_size(f.path) > (std::uintmax_t{8} << 20));
    kob::raw::Reader r;
    std::string error;
    REQUIRE(r.open(f.path, error));
    CHECK((r.cut_tail_bytes() > 0) == garbage);
    REQUIRE(r.threads().size() == 2);
    const std::size_t chunks = garbage ? 100 : 120;
    for (std::size_t t = 0; t < 2; ++t) {
      const kob::ThreadSource& th = *r.threads()[t];
      REQUIRE(th.chunk_count() == chunks);
      std::vector<Record> got;
      std::size_t bad = 0;
      for (std::size_t c = 0; c < chunks; ++c) {
        th.read_chunk(c, got);
        REQUIRE(got.size() == 4000);
        for (std::size_t k = 0; k < got.size(); ++k) bad += got[k].u[0] != t * 1000000 + 4000 * c + k;
      }
      CHECK(bad == 0);
    }
  }
}
