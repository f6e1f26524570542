// The streaming timeline builder: what it keeps stays bounded by what is open, whatever the run
// length, and it hands spans on in the order span_sink.hpp promises.
#include <doctest/doctest.h>

#include <functional>
#include <new>
#include <string>
#include <vector>

#include "common/record/clock.hpp"
#include "common/timeline/thread_merge.hpp"
#include "common/timeline/timeline_builder.hpp"
#include "common/formats/trace_producer.hpp"
#include "common/formats/trace_window.hpp"
#include "helpers.hpp"

namespace {

using kob::Ev;
using kob_test::nm;
using kob_test::Synth;
using kob_test::rec;
using kob::Record;


// A Kokkos OpenMP-backend run of n kernels on two threads, made chunk by chunk (never all in
// memory). Kernel i (id i+1, parallel region i+1) spans ticks 100i .. 100i+33. As libomp 19 does,
// the worker reports the end of its barrier and implicit task only when the next region starts.
class KernelRun : public kob::ThreadSource {
 public:
  KernelRun(bool worker, std::uint64_t n, std::uint32_t name) : worker_(worker), n_(n), name_(name) {
    index = worker ? 1 : 0;
    os_tid = 500 + index;
    omp_thread_type = worker ? 2 : 1;
  }
  std::size_t chunk_count() const override { return n_ + (worker_ ? 1 : 0); }
  void read_chunk(std::size_t i, std::vector<Record>& out) const override {
    out.clear();
    const std::uint64_t b = 100 * i + 1000, pid = i + 1, kid = i + 1;
    constexpr std::uint16_t kBarrier = 2;
    if (!worker_) {
      out.push_back(rec(b, Ev::KernelBegin, name_, {kid, 0x01000000}));
      out.push_back(rec(b + 1, Ev::OmpParallelBegin, 2, {pid, kid, 0x80000001, 0}));
      out.push_back(rec(b + 2, Ev::OmpImplicitTaskBegin, 0, {pid, kid, 2}));
      out.push_back(rec(b + 20, Ev::OmpSyncBegin, 0, {pid, kid, 0}, kBarrier));
      out.push_back(rec(b + 20, Ev::OmpSyncWaitBegin, 0, {pid, kid}, kBarrier));
      out.push_back(rec(b + 30, Ev::OmpSyncWaitEnd, 0, {pid, kid}, kBarrier));
      out.push_back(rec(b + 30, Ev::OmpSyncEnd, 0, {pid, kid, 0}, kBarrier));
      out.push_back(rec(b + 31, Ev::OmpImplicitTaskEnd, 0, {pid}));
      out.push_back(rec(b + 32, Ev::OmpParallelEnd, 0, {pid}));
      out.push_back(rec(b + 33, Ev::KernelEnd, 0, {kid}));
      return;
    }
    if (i > 0) {  // the previous region's end, reported now
      out.push_back(rec(b + 3, Ev::OmpSyncWaitEnd, 0, {pid - 1, kid - 1}, kBarrier));
      out.push_back(rec(b + 3, Ev::OmpSyncEnd, 0, {pid - 1, kid - 1, 0}, kBarrier));
      out.push_back(rec(b + 3, Ev::OmpImplicitTaskEnd, 1, {pid - 1}));
    }
    if (i == n_) return;
    out.push_back(rec(b + 3, Ev::OmpImplicitTaskBegin, 1, {pid, kid, 2}));
    out.push_back(rec(b + 4, Ev::OmpWorkBegin, 0, {pid, kid, 64}, 1));
    out.push_back(rec(b + 10, Ev::OmpWorkEnd, 0, {pid, kid, 0}, 1));
    out.push_back(rec(b + 11, Ev::OmpSyncBegin, 0, {pid, kid, 0}, kBarrier));
    out.push_back(rec(b + 11, Ev::OmpSyncWaitBegin, 0, {pid, kid}, kBarrier));
  }

 private:
  bool worker_;
  std::uint64_t n_;
  std::uint32_t name_;
};

// Checks each span as it comes, and samples what the builder keeps.
struct Checker : kob::SpanSink {
  kob::TimelineBuilder* builder = nullptr;
  std::size_t max_kept = 0;
  std::uint64_t kernels = 0, parallels = 0, implicit = 0, works = 0, syncs = 0, bad = 0;
  std::uint64_t last_parallel_end = 0, last_parallel_id = 0;
  std::uint64_t worker_cut = 0;  // worker implicit tasks that end where their region ended
  std::vector<std::string> problems;

  void sample() { max_kept = std::max(max_kept, builder->kept()); }
  void kernel(const kob::KernelSpan& k) override {
    ++kernels;
    bad += k.dur() != 33;
    sample();
  }
  void omp_parallel(const kob::OmpParallelSpan& p) override {
    ++parallels;
    bad += p.team_size != 2;
    last_parallel_end = p.end;
    last_parallel_id = p.id;
    sample();
  }
  void omp_implicit_task(const kob::OmpImplicitTaskSpan& i) override {
    ++implicit;
    if (i.track == 1) {
      // After its region (and its kernel): the region it belongs to has been given.
      bad += i.parallel_id > last_parallel_id;
      const std::uint64_t region_end = 100 * (i.parallel_id - 1) + 1000 + 32;
      worker_cut += kob::clock::to_ns(region_end) == i.end;
      bad += i.wait_ns != kob::clock::to_ns(region_end) - kob::clock::to_ns(region_end - 21);
    }
    sample();
  }
  void omp_work(const kob::OmpWorkSpan&) override { ++works; }
  void omp_sync(const kob::OmpSyncSpan&) override { ++syncs; }
  void finish(const kob::Timeline& rest) override { problems = rest.problems; }
};

// A trace sink that keeps only a digest of what it is given: per kind of call a count and a sum of
// hashes of everything the trace shows (flow ids left out: they are numbered per window, so each
// arrow counts by its two ends), so that two traces of 10^5 spans compare as equal multisets.
struct DigestSink : kob::trace::TraceSink {
  std::uint64_t events = 0, flows = 0, tracks = 0, windows = 0, sum = 0;
  std::size_t h(const std::string& s) { return std::hash<std::string>()(s); }
  void process(std::uint64_t, std::string_view, std::uint64_t) override {}
  void track(const kob::trace::TrackDesc& t) override {
    ++tracks;
    sum += h("T" + std::to_string(t.id) + t.name);
  }
  void event(const kob::trace::Event& e) override {
    ++events;
    std::string s = std::to_string(int(e.phase)) + e.cat + std::string(e.name) + "|" + std::to_string(e.track) + "|" +
                    std::to_string(e.ts) + "|" + std::to_string(e.end) + "|" + std::to_string(e.id) + "|" +
                    std::to_string(e.flows_out.size()) + "|" + std::to_string(e.flows_in.size());
    if (e.args) {
      for (const kob::trace::Arg& a : *e.args) {
        s += std::string(a.key) + "=";
        switch (a.type) {
          case kob::trace::Arg::Type::Uint:
          case kob::trace::Arg::Type::Bool: s += std::to_string(a.u); break;
          case kob::trace::Arg::Type::Int: s += std::to_string(a.i); break;
          case kob::trace::Arg::Type::Str:
          case kob::trace::Arg::Type::SharedStr: s += std::string(a.s); break;
          case kob::trace::Arg::Type::Null: s += "null"; break;
        }
        s += ";";
      }
    }
    sum += h(s);
  }
  void flow(const kob::trace::Flow& f) override {
    ++flows;
    sum += h(std::string(f.name) + std::to_string(f.from_track) + "|" + std::to_string(f.from_ts) + "|" +
             std::to_string(f.to_track) + "|" + std::to_string(f.to_ts));
  }
  void window_end() override { ++windows; }
  bool finish(const std::string&) override { return true; }
};

}  // namespace

TEST_CASE("trace windows: 20000 OpenMP kernels written 100 spans at a time give the trace written in one window") {
  constexpr std::uint64_t n = 20000;
  const std::uint32_t name = nm("window kernel");
  KernelRun master(false, n, name), worker(true, n, name);
  kob::TraceInfo info;

  DigestSink one;
  const kob::Timeline t = kob::build_timeline({&master, &worker});
  REQUIRE(kob::produce_trace(t, info, one));

  for (const bool background : {false, true}) {  // written by the caller, or by the window's own thread
    CAPTURE(background);
    DigestSink windowed;
    kob::TraceProducer producer(windowed, info);
    kob::TraceWindow window(producer, 100, background);
    {
      kob::TimelineBuilder builder(window);
      builder.set_poller(&window);
      kob::read_threads({&master, &worker}, builder);
      builder.finish(true);
    }
    CHECK(window.end("{}"));

    CHECK(one.windows == 1);
    CHECK(one.events == 7 * n);  // kernel, region, 2 implicit tasks, work, 2 syncs
    CHECK(windowed.events == one.events);
    CHECK(windowed.flows == one.flows);
    CHECK(one.flows == 2 * n);  // kernel -> region, region -> the worker's implicit task
    CHECK(windowed.tracks == one.tracks);
    CHECK(windowed.sum == one.sum);
    // A cut after about every 100 spans: each window holds 100 spans and what waited for its region.
    CHECK(windowed.windows == window.windows());
    CHECK(window.windows() >= n * 7 / (100 + 7));
    CHECK(window.largest_window() <= 100 + 7);
  }
}

// Decoders (read_threads' threads that decode chunks ahead of the merge) change who decodes, not
// what the builder gets: the trace of every decoder count is the one read without them.
TEST_CASE("reading ahead: chunks decoded on 1, 2 or 5 other threads give the same trace as none") {
  constexpr std::uint64_t n = 3000;  // 3000 chunks on one thread, 3001 on the other: many ring turns
  const std::uint32_t name = nm("ahead kernel");
  KernelRun master(false, n, name), worker(true, n, name);
  kob::TraceInfo info;
  const auto digest = [&](unsigned decoders) {
    DigestSink d;
    kob::TraceProducer producer(d, info);
    kob::TraceWindow window(producer, 100, false);
    {
      kob::TimelineBuilder builder(window);
      builder.set_poller(&window);
      kob::read_threads({&master, &worker}, builder, decoders);
      builder.finish(true);
    }
    CHECK(window.end("{}"));
    return d;
  };
  const DigestSink none = digest(0);
  CHECK(none.events == 7 * n);
  for (const unsigned decoders : {1u, 2u, 5u}) {
    CAPTURE(decoders);
    const DigestSink ahead = digest(decoders);
    CHECK(ahead.events == none.events);
    CHECK(ahead.flows == none.flows);
    CHECK(ahead.tracks == none.tracks);
    CHECK(ahead.sum == none.sum);
  }
}

// A chunk that cannot be decoded (memory) on a decoder thread: the merge throws it in the
// caller's thread, after the decoders have stopped; nothing hangs.
TEST_CASE("reading ahead: an exception decoding a chunk on a decoder comes out of read_threads") {
  struct Failing : KernelRun {
    using KernelRun::KernelRun;
    void read_chunk(std::size_t i, std::vector<Record>& out) const override {
      if (i == 40) throw std::bad_alloc();
      KernelRun::read_chunk(i, out);
    }
  };
  const std::uint32_t name = nm("failing kernel");
  Failing master(false, 100, name);
  KernelRun worker(true, 100, name);
  for (const unsigned decoders : {0u, 1u, 2u}) {
    CAPTURE(decoders);
    kob::TimelineCollector sink;
    kob::TimelineBuilder builder(sink);
    CHECK_THROWS_AS(kob::read_threads({&master, &worker}, builder, decoders), std::bad_alloc);
  }
}

// What the 64-thread tuning sample showed on a VM whose TSC steps 10 ns: an implicit task and the
// lock wait it begins with on the same tick. The task stays open while the thread takes the lock
// over and over; the wait, in the window, tied with it at every cut, and the window grew without
// end (270 MB). Now a thread's records on one tick are 1 ns apart (read_threads): no tie, the
// cuts go on, and the windows still write what one window writes.
TEST_CASE("trace windows: a span starting on the very tick of one still open (or before it) does not stop the cuts") {
  constexpr std::uint64_t kCycles = 3000;
  constexpr std::uint16_t kCritical = 5;  // ompt_mutex_critical
  // The lock wait on the task's tick, or one TSC step before it (the thread moved to a core whose
  // TSC is behind).
  for (const std::uint64_t acquire : {6, 4}) {
    CAPTURE(acquire);
    kob::MemoryThread th;
    th.index = 0;
    th.os_tid = 700;
    th.omp_thread_type = 1;
    auto& r = th.records;
    r.push_back(rec(5, Ev::OmpParallelBegin, 1, {1, 0, 0x80000001, 0}));
    r.push_back(rec(6, Ev::OmpImplicitTaskBegin, 0, {1, 0, 1}, 2));
    r.push_back(rec(acquire, Ev::OmpMutexAcquire, 0, {77}, kCritical));  // the tie
    r.push_back(rec(16, Ev::OmpMutexAcquired, 0, {77}, kCritical));
    r.push_back(rec(20, Ev::OmpMutexReleased, 0, {77}, kCritical));
    for (std::uint64_t k = 1; k <= kCycles; ++k) {
      const std::uint64_t t = 20 + 20 * k;
      r.push_back(rec(t, Ev::OmpMutexAcquire, 0, {77}, kCritical));
      r.push_back(rec(t + 5, Ev::OmpMutexAcquired, 0, {77}, kCritical));
      r.push_back(rec(t + 10, Ev::OmpMutexReleased, 0, {77}, kCritical));
    }
    const std::uint64_t end = 40 + 20 * kCycles;
    r.push_back(rec(end, Ev::OmpImplicitTaskEnd, 0, {1}, 2));
    r.push_back(rec(end + 1, Ev::OmpParallelEnd, 0, {1}));
    kob::TraceInfo info;
    DigestSink one;
    const kob::Timeline t = kob::build_timeline({&th});
    REQUIRE(kob::produce_trace(t, info, one));

    DigestSink windowed;
    kob::TraceProducer producer(windowed, info);
    kob::TraceWindow window(producer, 100, false);
    {
      kob::TimelineBuilder builder(window);
      builder.set_poller(&window);
      kob::read_threads({&th}, builder);
      builder.finish(true);
    }
    CHECK(window.end("{}"));
    CHECK(window.windows() >= 2 * kCycles / 100 - 1);  // a wait and a hold per cycle, ~100 spans a window
    CHECK(window.largest_window() <= 100 + 2);
    CHECK(windowed.events == one.events);
    CHECK(windowed.flows == one.flows);
    CHECK(windowed.sum == one.sum);
    // The wait that began on the task's tick: 1 ns after it, to its own end.
    REQUIRE(!t.omp_mutexes.empty());
    REQUIRE(t.omp_implicit_tasks.size() == 1);
    CHECK(t.omp_mutexes.front().start == t.omp_implicit_tasks.front().start + 1);
    CHECK(t.omp_mutexes.front().end == 16);
  }
}

TEST_CASE("streaming builder: what it keeps stays bounded over 200000 OpenMP kernels, each span given once") {
  constexpr std::uint64_t n = 200000;
  const std::uint32_t name = nm("stream kernel");
  KernelRun master(false, n, name), worker(true, n, name);
  Checker check;
  kob::TimelineBuilder builder(check);
  check.builder = &builder;
  kob::read_threads({&master, &worker}, builder);
  builder.finish(true);
  CHECK(check.kernels == n);
  CHECK(check.parallels == n);
  CHECK(check.implicit == 2 * n);
  CHECK(check.works == n);
  CHECK(check.syncs == 2 * n);
  CHECK(check.worker_cut == n);  // every worker task cut at its region's end, the last one at finish
  CHECK(check.bad == 0);
  CHECK(check.max_kept <= 6);
  CHECK(builder.kept() == 0);
  CHECK(check.problems.empty());
}

TEST_CASE("streaming builder: nested regions come children first, and the collector sorts them back") {
  Synth s(1);
  s.push(0, 10, "outer");
  s.push(0, 11, "mid");
  s.push(0, 12, "inner");
  s.pop(0, 13);
  s.pop(0, 14);
  s.push(0, 15, "mid2");
  s.pop(0, 16);
  s.pop(0, 17);
  struct Order : kob::SpanSink {
    std::vector<std::string> paths;
    void region(const kob::RegionSpan& r) override { paths.push_back(r.path); }
  } order;
  kob::TimelineBuilder b(order);
  kob::read_threads(s.list(), b);
  b.finish(true);
  CHECK(order.paths == std::vector<std::string>{"outer/mid/inner", "outer/mid", "outer/mid2", "outer"});
  const kob::Timeline t = s.build();
  REQUIRE(t.regions.size() == 4);
  CHECK(t.regions[0].path == "outer");
  CHECK(t.regions[3].path == "outer/mid2");
}

// The ids of s's kernels in the order the builder hands their spans on (as each ends), its
// threads read by read_threads.
static std::vector<std::uint64_t> kernel_end_order(Synth& s) {
  struct Ids : kob::SpanSink {
    std::vector<std::uint64_t> ids;
    void kernel(const kob::KernelSpan& k) override { ids.push_back(k.id); }
  } sink;
  kob::TimelineBuilder b(sink);
  kob::read_threads(s.list(), b);
  b.finish(true);
  return sink.ids;
}

TEST_CASE("streaming builder: records of several threads are read in time order") {
  Synth s(2);
  // Kernel 1 begins on track 0 and ends on track 1 later; ticks interleave.
  s.kernel_begin(0, 10, 1, "k");
  s.kernel_begin(1, 5, 2, "k2");
  s.kernel_end(1, 20, 1);
  s.kernel_end(0, 30, 2);
  CHECK(kernel_end_order(s) == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("streaming builder: runs of one thread's records and ties between threads keep time order, lower track first") {
  Synth s(2);
  // At time 3 both threads end a kernel: track 0's first. From 5 on, track 0 has a run of records
  // (5, 6, 6, 7) around track 1's two at 6: track 0's end at 6 comes before them, its begin at 6
  // (put 1 ns later: a begin at its thread's last time) after them.
  s.kernel_begin(1, 1, 10, "a");
  s.kernel_begin(0, 2, 20, "b");
  s.kernel_end(0, 3, 20);
  s.kernel_end(1, 3, 10);
  s.kernel_begin(0, 5, 30, "c");
  s.kernel_end(0, 6, 30);
  s.kernel_begin(0, 6, 31, "d");
  s.kernel_end(0, 7, 31);
  s.kernel_begin(1, 6, 40, "e");
  s.kernel_end(1, 6, 40);
  // Track 1's run from 10 stops before its end at 12: track 0 ends a kernel at 12 too.
  s.kernel_begin(0, 9, 60, "f");
  s.kernel_begin(1, 10, 50, "g");
  s.kernel_end(1, 12, 50);
  s.kernel_end(0, 12, 60);
  CHECK(kernel_end_order(s) == std::vector<std::uint64_t>{20, 10, 30, 40, 31, 60, 50});
}
