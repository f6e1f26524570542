// Chrome trace output from a synthetic timeline.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/formats/trace_writer.hpp"
#include "helpers.hpp"

using kob::Timeline;
using kob_test::nm;

namespace {

using kob_test::span;

// Python: checks that X events on each tid nest (no partial overlap), times in integer ns.
const char* kNestCheck = R"PY(
import collections
xs = collections.defaultdict(list)
for e in d["traceEvents"]:
    if e["ph"] == "X":
        xs[e["tid"]].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
for tid, v in xs.items():
    v.sort(key=lambda p: (p[0], -p[1]))
    stack = []
    for s, e in v:
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or e <= stack[-1], (tid, s, e, stack)
        stack.append(e)
)PY";

}  // namespace

TEST_CASE("trace writer: valid JSON, thread names, nesting repaired") {
  Timeline t;
  t.tracks = {kob::Track{0, 1001, 1}, kob::Track{1, 1002, 0}};
  t.t0 = 50;
  t.t_end = 700;

  auto r = span<kob::RegionSpan>(0, 100, 500);
  r.name = nm("tw_region");
  r.path = "tw_region";
  t.regions.push_back(r);

  auto k = span<kob::KernelSpan>(0, 200, 600);  // outlives its parent region: cut at 500
  k.name = nm("tw \"kernel\"");
  k.id = 7;
  k.devid = 0x01000000;
  k.region = "tw_region";
  t.kernels.push_back(k);
  auto k2 = span<kob::KernelSpan>(1, 50, 80);
  k2.name = nm("tw_k2");
  k2.id = 8;
  k2.kind = kob::KernelKind::ParallelReduce;
  t.kernels.push_back(k2);

  auto f = span<kob::FenceSpan>(0, 500, 510);  // starts where the region ends: a sibling, not cut
  f.name = nm("tw_fence");
  f.id = 3;
  t.fences.push_back(f);

  auto d = span<kob::DeepCopySpan>(1, 100, 200);
  d.id = 2;
  d.dst_space = nm("Host");
  d.dst_name = nm("tw_dst");
  d.src_space = nm("Cuda");
  d.src_name = nm("tw_src");
  d.bytes = 64;
  t.deep_copies.push_back(d);

  auto sec = span<kob::SectionSpan>(0, 60, 650);
  sec.section = 4;
  sec.name = nm("tw_section");
  sec.end_track = 1;
  t.sections.push_back(sec);

  kob::MemoryEvent m;
  m.time = 70;
  m.track = 1;
  m.space = nm("Host");
  m.name = nm("tw_view");
  m.ptr = 0xbeef;
  m.bytes = 128;
  m.space_level = 128;
  t.memory.push_back(m);
  t.events.push_back({90, 0, nm("tw_event")});
  kob::DualViewEvent dv;
  dv.time = 95;
  dv.name = nm("tw_dv");
  dv.modify = true;
  t.dual_views.push_back(dv);

  std::uint64_t clipped = 99;
  bool ok = false;
  const std::string json = kob_test::chrome_trace_text(t, &clipped, &ok);
  CHECK(ok);
  CHECK(clipped == 1);
  CHECK(kob_test::python_json_check(json, kNestCheck) == 0);
  CHECK(kob_test::python_json_check(json, R"PY(
ev = d["traceEvents"]
assert d["displayTimeUnit"] == "ns" and d["otherData"] == {"dropped_events": 0}
assert all(e["pid"] == 4242 for e in ev)
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert names == {1001: "omp thread 0", 1002: "thread 1"}, names
proc = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert len(proc) == 1 and proc[0]["args"]["name"] == 'unit "proc"'
x = {e["name"]: e for e in ev if e["ph"] == "X"}
assert len(x) == 5, sorted(x)
k = x['tw "kernel"']
assert (k["cat"], k["tid"], k["ts"], k["dur"]) == ("kokkos.kernel", 1001, 0.15, 0.3), k
assert k["args"] == {"id": 7, "kind": "parallel_for", "devid": 16777216, "device": "OpenMP", "region": "tw_region"}, k
assert x["tw_k2"]["ts"] == 0 and x["tw_k2"]["dur"] == 0.03 and x["tw_k2"]["args"]["kind"] == "parallel_reduce"
r = x["tw_region"]
assert (r["cat"], r["ts"], r["dur"], r["args"]["path"]) == ("kokkos.region", 0.05, 0.4, "tw_region"), r
fe = x["tw_fence"]
assert (fe["cat"], fe["ts"], fe["dur"], fe["args"]["id"]) == ("kokkos.fence", 0.45, 0.01, 3), fe
dc = x["tw_dst <- tw_src"]
assert dc["cat"] == "kokkos.deep_copy" and dc["tid"] == 1002, dc
assert dc["args"] == {"id": 2, "dst_space": "Host", "dst_name": "tw_dst", "src_space": "Cuda", "src_name": "tw_src", "bytes": 64}
b = [e for e in ev if e.get("cat") == "kokkos.section"]
assert [(e["ph"], e["tid"], e["ts"], e["id"]) for e in b] == [("b", 1001, 0.01, 4), ("e", 1002, 0.6, 4)], b
a = [e for e in ev if e.get("cat") == "kokkos.alloc"]
assert len(a) == 1 and a[0]["args"] == {"space": "Host", "ptr": "0xbeef", "bytes": 128} and a[0]["name"] == "tw_view"
c = [e for e in ev if e["ph"] == "C"]
assert len(c) == 1 and c[0]["name"] == "memory Host" and c[0]["args"] == {"bytes": 128}
i = [e for e in ev if e.get("cat") == "kokkos.event"]
assert len(i) == 1 and i[0]["name"] == "tw_event" and i[0]["ts"] == 0.04
v = [e for e in ev if e.get("cat") == "kokkos.dual_view"]
assert len(v) == 1 and v[0]["args"]["op"] == "modify" and v[0]["args"]["on_device"] is False
)PY") == 0);
}

TEST_CASE("trace writer: proper nesting is left alone") {
  Timeline t;
  t.tracks = {kob::Track{0, 7, 0}};
  t.t_end = 100;
  auto outer = span<kob::RegionSpan>(0, 0, 100);
  outer.name = nm("tw_outer");
  auto same = span<kob::KernelSpan>(0, 0, 100);  // exactly the region's span
  same.name = nm("tw_same");
  auto inner = span<kob::KernelSpan>(0, 40, 100);  // ends with its parent
  inner.name = nm("tw_inner");
  auto after = span<kob::FenceSpan>(0, 100, 100);  // zero length, at the parent's end
  after.name = nm("tw_after");
  t.regions = {outer};
  t.kernels = {same, inner};
  t.fences = {after};
  std::uint64_t clipped = 99;
  const std::string json = kob_test::chrome_trace_text(t, &clipped);
  CHECK(clipped == 0);
  CHECK(kob_test::python_json_check(json, kNestCheck) == 0);
  CHECK(kob_test::python_json_check(json, R"PY(
x = {e["name"]: e for e in d["traceEvents"] if e["ph"] == "X"}
assert (x["tw_inner"]["ts"], x["tw_inner"]["dur"]) == (0.04, 0.06)
assert x["tw_same"]["dur"] == 0.1 and x["tw_outer"]["dur"] == 0.1 and x["tw_after"]["dur"] == 0
names = [e for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
assert len(names) == 1 and names[0]["tid"] == 7 and names[0]["args"]["name"] == "thread 0"
)PY") == 0);
}

TEST_CASE("trace writer: a chain of overlaps is cut at every level") {
  Timeline t;
  t.tracks = {kob::Track{0, 9, 0}};
  t.t_end = 400;
  // [0,200], [100,300], [150,400]: each outlives the one before.
  const std::uint64_t spans[3][2] = {{0, 200}, {100, 300}, {150, 400}};
  const char* names[] = {"tw_c0", "tw_c1", "tw_c2"};
  for (int i = 0; i < 3; ++i) {
    auto k = span<kob::KernelSpan>(0, spans[i][0], spans[i][1]);
    k.name = nm(names[i]);
    k.id = std::uint64_t(i);
    t.kernels.push_back(k);
  }
  std::uint64_t clipped = 0;
  const std::string json = kob_test::chrome_trace_text(t, &clipped);
  CHECK(clipped == 2);
  CHECK(kob_test::python_json_check(json, kNestCheck) == 0);
  CHECK(kob_test::python_json_check(json, R"PY(
x = {e["name"]: e for e in d["traceEvents"] if e["ph"] == "X"}
assert x["tw_c1"]["dur"] == 0.1 and x["tw_c2"]["dur"] == 0.05, x
)PY") == 0);
}

TEST_CASE("trace writer: empty timeline") {
  Timeline t;
  std::uint64_t clipped = 99;
  const std::string json = kob_test::chrome_trace_text(t, &clipped);
  CHECK(clipped == 0);
  CHECK(kob_test::python_json_check(json, "assert len(d['traceEvents']) == 1") == 0);
}
