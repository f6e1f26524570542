// Summary figures, text and JSON.
#include <doctest/doctest.h>

#include <string>

#include "common/analysis/summary.hpp"
#include "common/support/text_safe.hpp"
#include "helpers.hpp"

using kob::KernelKind;
using kob::Summary;
using kob::Timeline;
using kob_test::nm;
using kob_test::RecorderReset;
using kob_test::Synth;

namespace {

// Records for a long stretch of one track (the exact count does not matter).
constexpr std::uint64_t kFill = 2048;

kob::KernelSpan kernel(const char* name, std::uint64_t start, std::uint64_t end, KernelKind kind = KernelKind::ParallelFor,
                       std::uint32_t devid = 0x01000000) {
  kob::KernelSpan k;
  k.name = nm(name);
  k.start = start;
  k.end = end;
  k.kind = kind;
  k.devid = devid;
  return k;
}

kob::RegionSpan region(const char* name, const char* path, std::uint32_t depth, std::uint64_t start, std::uint64_t end,
                       std::uint32_t track = 0) {
  kob::RegionSpan r;
  r.name = nm(name);
  r.path = path;
  r.depth = depth;
  r.start = start;
  r.end = end;
  r.track = track;
  return r;
}

const kob::KernelStats* find_kernel(const Summary& s, const std::string& name, const std::string& kind) {
  for (const auto& k : s.kernels)
    if (k.name == name && k.kind == kind) return &k;
  return nullptr;
}

const kob::RegionStats* find_region(const Summary& s, const std::string& path) {
  for (const auto& r : s.regions)
    if (r.path == path) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("summary: kernel calls, total, mean, min, max") {
  Timeline t;
  t.tracks.resize(1);
  t.kernels = {kernel("sum_k", 0, 100), kernel("sum_k", 200, 500), kernel("sum_k", 600, 800),
               kernel("sum_k", 900, 950, KernelKind::ParallelReduce, 0x02020001), kernel("sum_big", 1000, 2000)};
  t.t0 = 0;
  t.t_end = 2000;
  const Summary s = kob::summarize(t);
  CHECK(s.run_time == 2000);
  REQUIRE(s.kernels.size() == 3);
  CHECK(s.kernels[0].name == "sum_big");  // largest total first
  CHECK(s.kernels[1].name == "sum_k");
  CHECK(s.kernels[1].kind == "parallel_for");
  const auto* k = find_kernel(s, "sum_k", "parallel_for");
  REQUIRE(k != nullptr);
  CHECK(k->calls == 3);
  CHECK(k->total == 600);
  CHECK(k->mean() == 200);
  CHECK(k->min == 100);
  CHECK(k->max == 300);
  CHECK(k->device == "OpenMP");
  const auto* r = find_kernel(s, "sum_k", "parallel_reduce");  // same name, other kind: its own row
  REQUIRE(r != nullptr);
  CHECK(r->calls == 1);
  CHECK(r->total == 50);
  CHECK(r->min == 50);
  CHECK(r->max == 50);
  CHECK(r->device == "Cuda device 1");
}

TEST_CASE("summary: region inclusive and exclusive time") {
  Timeline t;
  t.tracks.resize(2);
  t.regions = {
      region("outer", "outer", 0, 0, 1000),
      region("a", "outer/a", 1, 100, 300),
      region("b", "outer/b", 1, 400, 700),
      region("c", "outer/b/c", 2, 450, 500),
      region("outer", "outer", 0, 0, 100, 1),  // the same region on another thread, overlapping in time
  };
  t.t_end = 1000;
  const Summary s = kob::summarize(t);
  REQUIRE(s.regions.size() == 4);
  CHECK(s.regions[0].path == "outer");  // tree order
  CHECK(s.regions[1].path == "outer/a");
  CHECK(s.regions[2].path == "outer/b");
  CHECK(s.regions[3].path == "outer/b/c");
  const auto* outer = find_region(s, "outer");
  CHECK(outer->calls == 2);
  CHECK(outer->inclusive == 1100);
  CHECK(outer->exclusive == 1100 - 200 - 300);
  CHECK(outer->depth == 0);
  const auto* b = find_region(s, "outer/b");
  CHECK(b->inclusive == 300);
  CHECK(b->exclusive == 250);
  CHECK(b->name == "b");
  CHECK(b->depth == 1);
  CHECK(find_region(s, "outer/a")->exclusive == 200);
  CHECK(find_region(s, "outer/b/c")->inclusive == 50);
  CHECK(find_region(s, "outer/b/c")->exclusive == 50);
}

TEST_CASE("summary: regions from recorded pushes and pops") {
  RecorderReset reset;
  Synth rec(1);
  rec.push(0, 0, "sr_outer");
  rec.push(0, 10, "sr_mid");
  rec.push(0, 20, "sr_leaf");
  rec.pop(0, 25);
  rec.pop(0, 40);
  rec.push(0, 50, "sr_mid");
  rec.pop(0, 60);
  rec.pop(0, 100);
  const Summary s = kob::summarize(rec.build());
  REQUIRE(s.regions.size() == 3);
  const auto* outer = find_region(s, "sr_outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->inclusive == 100);
  CHECK(outer->exclusive == 60);
  const auto* mid = find_region(s, "sr_outer/sr_mid");
  REQUIRE(mid != nullptr);
  CHECK(mid->calls == 2);
  CHECK(mid->inclusive == 40);
  CHECK(mid->exclusive == 35);
}

// A child region pushed and popped on its parent's ticks has the same span; depth must keep it
// the child (the timeline stores regions at pop time, child first).
TEST_CASE("summary: a child with exactly its parent's span is still the child") {
  Timeline t;
  t.tracks.resize(1);
  t.regions = {region("tie_child", "tie_parent/tie_child", 1, 10, 50), region("tie_parent", "tie_parent", 0, 10, 50)};
  t.t_end = 50;
  const Summary s = kob::summarize(t);
  REQUIRE(s.regions.size() == 2);
  CHECK(find_region(s, "tie_parent")->exclusive == 0);
  CHECK(find_region(s, "tie_parent/tie_child")->exclusive == 40);

  // The same from recorded pushes and pops at equal ticks.
  RecorderReset reset;
  Synth rec(1);
  rec.push(0, 10, "tie_parent");
  rec.push(0, 10, "tie_child");
  rec.pop(0, 50);
  rec.pop(0, 50);
  const Summary r = kob::summarize(rec.build());
  REQUIRE(r.regions.size() == 2);
  CHECK(find_region(r, "tie_parent")->exclusive == 0);
  CHECK(find_region(r, "tie_parent/tie_child")->exclusive == 40);
}

TEST_CASE("summary: memory high-water per space") {
  RecorderReset reset;
  Synth rec(2);
  rec.alloc(0, 10, "SumHost", "a", 0x1, 100);
  rec.alloc(1, 20, "SumHost", "b", 0x2, 50);
  rec.alloc(0, 25, "SumCuda", "c", 0x3, 1000);
  rec.dealloc(1, 30, "SumHost", "a", 0x1, 100);
  rec.alloc(0, 40, "SumHost", "d", 0x4, 20);
  rec.dealloc(0, 50, "SumCuda", "c", 0x3, 1000);
  const Summary s = kob::summarize(rec.build());
  REQUIRE(s.memory.size() == 2);
  for (const auto& m : s.memory) {
    CAPTURE(m.space);
    if (m.space == "SumHost") {
      CHECK(m.allocations == 3);
      CHECK(m.deallocations == 1);
      CHECK(m.bytes_allocated == 170);
      CHECK(m.high_water == 150);
      CHECK(m.final_level == 70);
    } else {
      CHECK(m.space == "SumCuda");
      CHECK(m.allocations == 1);
      CHECK(m.deallocations == 1);
      CHECK(m.bytes_allocated == 1000);
      CHECK(m.high_water == 1000);
      CHECK(m.final_level == 0);
    }
  }
}

TEST_CASE("summary: deep-copy bandwidth, fences, sections, counts, dropped") {
  RecorderReset reset;
  Synth rec(1);
  rec.copy_begin(0, 0, 1, "SumDev", "d1", "SumHst", "s1", 1000);
  rec.copy_end(0, 500, 1);
  rec.copy_begin(0, 1000, 2, "SumDev", "d2", "SumHst", "s2", 3000);
  rec.copy_end(0, 2500, 2);
  rec.copy_begin(0, 3000, 3, "SumHst", "d3", "SumDev", "s3", 10);
  rec.copy_end(0, 3010, 3);
  rec.fence_begin(0, 4000, 1, "sum_fence");
  rec.fence_end(0, 4010, 1);
  rec.fence_begin(0, 4100, 2, "sum_fence");
  rec.fence_end(0, 4130, 2);
  rec.section_create(0, 4200, 1, "sum_section");
  rec.section_start(0, 4300, 1);
  rec.section_stop(0, 4400, 1);
  rec.rec(0, 4500, kob::Ev::ProfileEvent, nm("ev"));
  rec.rec(0, 4600, kob::Ev::DualView, nm("dv"), {1, 0}, 1);
  rec.rec(0, 4700, kob::Ev::DualView, nm("dv"), {1, 0}, 0);
  rec.rec(0, 4800, kob::Ev::DualView, nm("dv"), {1, 0}, 0);
  Timeline t = rec.build();
  t.dropped = 7;
  t.filtered_kernels = 2;
  t.filtered_regions = 3;
  const Summary s = kob::summarize(t);
  REQUIRE(s.copies.size() == 2);
  const kob::CopyStats* h2d = s.copies[0].dst_space == "SumDev" ? &s.copies[0] : &s.copies[1];
  CHECK(h2d->dst_space == "SumDev");
  CHECK(h2d->src_space == "SumHst");
  CHECK(h2d->calls == 2);
  CHECK(h2d->bytes == 4000);
  CHECK(h2d->time == 2000);
  CHECK(h2d->gb_per_s() == doctest::Approx(2.0));  // 4000 bytes in 2000 ns
  REQUIRE(s.fences.size() == 1);
  CHECK(s.fences[0].name == "sum_fence");
  CHECK(s.fences[0].calls == 2);
  CHECK(s.fences[0].total == 40);
  REQUIRE(s.sections.size() == 1);
  CHECK(s.sections[0].calls == 1);
  CHECK(s.sections[0].total == 100);
  CHECK(s.profile_events == 1);
  CHECK(s.dual_view_modifies == 1);
  CHECK(s.dual_view_syncs == 2);
  CHECK(s.dropped == 7);
  CHECK(s.filtered_kernels == 2);
  CHECK(s.filtered_regions == 3);
  CHECK(s.run_time == 4800);

  const std::string text = kob::summary_text(s, "unit");
  CHECK(text.find("dropped events: 7 (raise --memory-limit)") != std::string::npos);
  CHECK(text.find("2.00 GB/s") != std::string::npos);
  CHECK(text.find("2 kernel calls, 3 region entries") != std::string::npos);

  const std::string json = kob::summary_json(s, "{\"tool\": \"unit\"}");
  CHECK(kob_test::python_json_check(json, R"PY(
assert d["otherData"] == {"tool": "unit"}
assert d["dropped_events"] == 7
assert d["run_time_ns"] == 4800
c = [x for x in d["deep_copies"] if x["dst_space"] == "SumDev"][0]
assert (c["calls"], c["bytes"], c["time_ns"]) == (2, 4000, 2000), c
assert abs(c["bandwidth_gb_per_s"] - 2.0) < 1e-9, c
assert d["fences"] == [{"name": "sum_fence", "calls": 2, "total_ns": 40}]
assert d["sections"] == [{"name": "sum_section", "intervals": 1, "total_ns": 100}]
assert (d["profile_events"], d["dual_view_syncs"], d["dual_view_modifies"]) == (1, 2, 1)
assert (d["filtered_kernel_calls"], d["filtered_region_entries"]) == (2, 3)
)PY") == 0);
}

TEST_CASE("summary: JSON parses and carries the kernel and region figures, odd names included") {
  Timeline t;
  t.tracks.resize(1);
  t.kernels = {kernel("sum \"q\" \\ \x01\n", 0, 100), kernel("sum \"q\" \\ \x01\n", 200, 500),
               kernel("bad\xff", 600, 601)};
  t.regions = {region("r\xc3\xa9", "r\xc3\xa9", 0, 0, 1000), region("in", "r\xc3\xa9/in", 1, 100, 400)};
  t.t_end = 1000;
  t.problems = {"a \"quoted\" problem (1 time)"};
  const Summary s = kob::summarize(t);
  const std::string json = kob::summary_json(s, "{}");
  CHECK(kob_test::python_json_check(json, R"PY(
k = d["kernels"][0]
assert k["name"] == 'sum "q" \\ \x01\n', k
assert (k["kind"], k["device"]) == ("parallel_for", "OpenMP"), k
assert (k["calls"], k["total_ns"], k["mean_ns"], k["min_ns"], k["max_ns"]) == (2, 400, 200, 100, 300), k
assert d["kernels"][1]["name"] == "bad\ufffd"
r = d["regions"]
assert [x["path"] for x in r] == ["r\u00e9", "r\u00e9/in"], r
assert (r[0]["calls"], r[0]["inclusive_ns"], r[0]["exclusive_ns"], r[0]["depth"]) == (1, 1000, 700, 0), r
assert (r[1]["inclusive_ns"], r[1]["exclusive_ns"], r[1]["name"], r[1]["depth"]) == (300, 300, "in", 1), r
assert d["problems"] == ['a "quoted" problem (1 time)']
assert d["memory"] == [] and d["deep_copies"] == [] and d["dropped_events"] == 0
)PY") == 0);
}

TEST_CASE("summary: empty timeline") {
  const Timeline t;
  const Summary s = kob::summarize(t);
  CHECK(s.run_time == 0);
  CHECK(s.kernels.empty());
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), "assert d['kernels'] == [] and d['run_time_ns'] == 0") == 0);
  CHECK(kob::summary_text(s, "empty").find("dropped events: 0\n") != std::string::npos);
}

TEST_CASE("summary: past the memory cap, the span covered, partial rows and the drop line") {
  RecorderReset reset;
  Synth rec(2);
  // Track 1 first: its chunk is the first of the two; its events all fit.
  rec.kernel_begin(1, 10, 1, "cov_complete");
  rec.kernel_end(1, 20, 1);
  rec.push(1, 30, "cov_region_ok");
  rec.pop(1, 40);
  // Track 0: a full chunk of kernels (1024 calls), then 10 more calls dropped.
  std::uint64_t t = 100, id = 2;
  for (std::size_t i = 0; i < kFill / 2; ++i, ++id, t += 10) {
    rec.kernel_begin(0, t, id, "cov_lossy");
    rec.kernel_end(0, t + 5, id);
  }
  rec.bufs[0]->dropped = 20;  // no stretch known: all after its last recorded event
  Timeline tl = rec.build();
  const std::uint64_t last = 100 + (kFill / 2 - 1) * 10 + 5;  // the last recorded end
  tl.run_end = 50000;
  const Summary s = kob::summarize(tl);
  CHECK(s.dropped == 20);
  const kob::Coverage& c = s.coverage;
  CHECK_FALSE(c.complete());
  REQUIRE(c.threads.size() == 1);
  CHECK(c.threads[0].index == 0);
  CHECK(c.threads[0].dropped == 20);
  CHECK(c.threads[0].recorded_until == last - 10);  // from the first event (t0 = 10)
  CHECK(c.complete_until == last - 10);
  CHECK(c.run_end == 50000 - 10);
  CHECK(s.run_time == 50000 - 10);
  const kob::KernelStats* lossy = find_kernel(s, "cov_lossy", "parallel_for");
  const kob::KernelStats* complete = find_kernel(s, "cov_complete", "parallel_for");
  REQUIRE(lossy);
  REQUIRE(complete);
  CHECK(lossy->calls == kFill / 2);
  CHECK(lossy->partial);
  CHECK_FALSE(complete->partial);
  REQUIRE(find_region(s, "cov_region_ok"));
  CHECK_FALSE(find_region(s, "cov_region_ok")->partial);

  const std::string text = kob::summary_text(s, "unit");
  CHECK(last - 10 == 10325);
  CHECK(text.find("run time (first event to the end of the run): 50.0 us\n") != std::string::npos);
  CHECK(text.find("INCOMPLETE: 20 events dropped past the memory cap (--memory-limit); the figures hold every event only until "
                  "10.3 us of 50.0 us\n") != std::string::npos);
  CHECK(text.find("thread 0 (os tid 1000): recorded until 10.3 us, then 20 events dropped\n") != std::string::npos);
  CHECK(text.find("  cov_lossy *  ") != std::string::npos);
  CHECK(text.find("  cov_complete  ") != std::string::npos);
  CHECK(text.find("rows marked * ") != std::string::npos);
  CHECK(kob::dropped_line(s, 1) ==
        "20 events dropped past --memory-limit=1 (MiB); the figures hold every event only until 10.3 us of the 50.0 us run "
        "(raise --memory-limit)");

  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
c = d["coverage"]
assert (c["complete"], c["dropped_events"], c["complete_until_ns"], c["run_end_ns"]) == (False, 20, )PY" +
                                        std::to_string(last - 10) + R"PY(, 49990), c
assert c["threads"] == [{"track": 0, "os_tid": 1000, "dropped_events": 20, "recorded_until_ns": )PY" + std::to_string(last - 10) +
                                        R"PY(}], c
k = {x["name"]: x["partial"] for x in d["kernels"]}
assert k == {"cov_lossy": True, "cov_complete": False}, k
assert [r["partial"] for r in d["regions"]] == [False]
assert d["run_time_ns"] == 49990
)PY") == 0);
}

TEST_CASE("summary: nothing dropped, the coverage is the whole run and no row is partial") {
  Timeline t;
  t.tracks.resize(1);
  t.kernels = {kernel("cov_whole", 0, 100)};
  t.t_end = 100;
  const Summary s = kob::summarize(t);
  CHECK(s.coverage.complete());
  CHECK_FALSE(s.kernels[0].partial);
  const std::string text = kob::summary_text(s, "unit");
  CHECK(text.find("run time (first to last event): 100 ns") != std::string::npos);
  CHECK(text.find("INCOMPLETE") == std::string::npos);
  CHECK(text.find('*') == std::string::npos);
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
assert d["coverage"] == {"complete": True, "dropped_events": 0, "complete_until_ns": 100, "run_end_ns": 100, "threads": [], "lost": []}
assert d["kernels"][0]["partial"] is False
)PY") == 0);
}

TEST_CASE("summary: text tables stay narrow and free of control characters whatever the names") {
  Timeline t;
  t.tracks.resize(1);
  const std::string huge = "K_" + std::string(1 << 20, 'k') + "_END";
  t.kernels = {kernel(huge.c_str(), 0, 100), kernel("ctl\x1b]0;title\x07\r\n", 100, 200)};
  std::string path;
  for (std::uint32_t d = 0; d < 40; ++d) {
    path += (d ? "/" : "") + std::string("lvl") + std::to_string(d);
    t.regions.push_back(region(("lvl" + std::to_string(d)).c_str(), path.c_str(), d, d, 1000 - d));
  }
  t.t_end = 1000;
  const Summary s = kob::summarize(t);
  const std::string text = kob::summary_text(s, "title\x1b[2J");
  CHECK(text.size() < 8000);
  std::size_t line_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      CHECK(i - line_start <= 130);
      line_start = i + 1;
    } else {
      CHECK(static_cast<unsigned char>(text[i]) >= 0x20);
    }
  }
  CHECK(text.find("K_kkkk") != std::string::npos);
  CHECK(text.find("kkk_END") != std::string::npos);
  CHECK(text.find("ctl\\x1b]0;title\\x07\\r\\n") != std::string::npos);
  CHECK(text.find("[39] lvl39") != std::string::npos);  // deep regions: indentation capped, depth shown
  CHECK(text.find("title\\x1b[2J") != std::string::npos);
  // The JSON keeps the whole name.
  CHECK(kob::summary_json(s, "{}").find(huge) != std::string::npos);
}

TEST_CASE("summary: an OpenMP thread that dropped events marks the OpenMP per-kernel rows") {
  Timeline t;
  t.tracks.resize(2);
  t.tracks[0].omp_thread_type = 1;  // initial thread: launched the kernel, kept every event
  t.tracks[1].omp_thread_type = 2;  // worker: dropped events
  t.tracks[1].dropped = 5;
  t.tracks[1].last_ns = 50;
  t.dropped = 5;
  t.omp_records = 10;
  kob::KernelSpan k = kernel("cov_omp_kernel", 0, 100);
  k.id = 1;
  t.kernels = {k};
  kob::OmpParallelSpan p;
  p.start = 10;
  p.end = 90;
  p.id = 7;
  p.kernel = 1;
  t.omp_parallels = {p};
  t.t_end = 100;
  const Summary s = kob::summarize(t);
  REQUIRE(s.kernels.size() == 1);
  CHECK_FALSE(s.kernels[0].partial);  // its launches are all recorded
  REQUIRE(s.openmp.kernels.size() == 1);
  CHECK(s.openmp.kernels[0].partial);  // a team thread's events are cut
  const std::string text = kob::summary_text(s, "unit");
  CHECK(text.find("  cov_omp_kernel *  ") != std::string::npos);  // the OpenMP per-kernel row
  CHECK(text.find("  cov_omp_kernel  ") != std::string::npos);    // the kernel row
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
assert d["openmp"]["kernels"][0]["partial"] is True
assert d["kernels"][0]["partial"] is False
)PY") == 0);
}

TEST_CASE("summary: the OpenMP constructs table, text bounded and cut like the others, JSON whole") {
  Summary s;
  s.run_time = 1'000'000;
  s.openmp.records = 1;
  for (int i = 0; i < 35; ++i) {
    kob::OmpConstructStats c;
    c.category = i == 1 ? kob::OmpConstructStats::Category::Mutex : kob::OmpConstructStats::Category::Work;
    c.kind = i == 1 ? "critical" : "loop_static";
    c.function = i == 0 ? std::string(200, 'f') : "fn" + std::to_string(i);
    c.file = "/src/app/site.cpp";
    c.line = 10 + i;
    c.module = "/opt/app/bin/app";
    c.source = c.function + " (" + c.file + ":" + std::to_string(c.line) + ")";
    c.label = c.function + " site.cpp:" + std::to_string(c.line);
    c.calls = 4;
    c.total = 1000 * (100 - i);
    c.wait = i == 1 ? 30'000 : 0;
    c.hold = i == 1 ? 69'000 : 0;
    s.openmp.constructs.push_back(c);
  }
  const std::string text = kob::summary_text(s, "x");
  const std::size_t at = text.find("\nOpenMP constructs outside Kokkos kernels, by source location");
  REQUIRE(at != std::string::npos);
  const std::string table = text.substr(at);
  CHECK(table.find("fn29 site.cpp:39") != std::string::npos);  // the 30th row
  CHECK(table.find("fn30 site.cpp:40") == std::string::npos);  // the 31st: counted, not shown
  CHECK(table.find("  ... and 5 more (summary.json lists them all)\n") != std::string::npos);
  CHECK(table.find(std::string(200, 'f')) == std::string::npos);  // cut in the middle, as names are
  CHECK(table.find("fffff...fffff") != std::string::npos);
  CHECK(table.find("  fn1 site.cpp:11") != std::string::npos);
  for (std::size_t from = 0, to; (to = table.find('\n', from)) != std::string::npos; from = to + 1) CHECK(to - from <= 160);
  const std::string js = kob::summary_json(s, "{}");
  CHECK(kob_test::python_json_check(js, R"(
c = d['openmp']['constructs']
assert len(c) == 35, len(c)
assert c[0]['function'] == 'f' * 200 and c[0]['file'] == '/src/app/site.cpp' and c[0]['line'] == 10, c[0]
assert c[0]['module'] == '/opt/app/bin/app' and c[0]['source'].endswith('(/src/app/site.cpp:10)'), c[0]
assert (c[0]['calls'], c[0]['total_ns'], c[0]['mean_ns'], c[0]['category']) == (4, 100000, 25000, 'work'), c[0]
assert (c[1]['kind'], c[1]['wait_ns'], c[1]['hold_ns']) == ('critical', 30000, 69000), c[1]
)") == 0);
  s.openmp.constructs.clear();
  CHECK(kob::summary_text(s, "x").find("OpenMP constructs") == std::string::npos);
  CHECK(kob::summary_json(s, "{}").find("\"constructs\": []") != std::string::npos);
}

TEST_CASE("summary: a construct's location is cut in its function, its file and line kept whole") {
  namespace sf = kob::summary_format;
  CHECK(sf::location("main tuning_sample.cpp:45") == "main tuning_sample.cpp:45");
  const std::string fn = "(anonymous namespace)::a_function_with_a_rather_long_name_indeed(int, double)";
  const std::string cut = sf::location(fn + " openmp_constructs.cpp:42");
  CHECK(cut.size() == kob::text::kNameColumns);
  CHECK(cut.substr(cut.size() - 25) == " openmp_constructs.cpp:42");
  CHECK(cut.substr(0, 10) == fn.substr(0, 10));
  // Without a line (symbol+offset, module+offset, a bare address): cut as any name.
  const std::string symbol = "Kokkos::Impl::OpenMPExec::resize_thread_data(unsigned long, unsigned long, unsigned long)+0x1b9";
  CHECK(sf::location(symbol) == sf::name(symbol));
  CHECK(sf::location("0x401000") == "0x401000");
  CHECK(sf::location("libfoo.so+0x1f0") == "libfoo.so+0x1f0");
  CHECK(sf::location("bad\nname x.c:3") == "bad\\nname x.c:3");
}
