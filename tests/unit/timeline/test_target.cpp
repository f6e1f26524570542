// Target offload from synthetic records: pairing, the host's device number, Kokkos links,
// device tracks and records, the trace's events and flows, the summary's per-device figures.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/analysis/summary.hpp"
#include "common/formats/trace_writer.hpp"
#include "helpers.hpp"

using kob::Ev;
using kob::Timeline;
using kob_test::nm;
using kob_test::RecorderReset;
using kob_test::Synth;

namespace {

std::uint32_t pair(int src, int dst) {
  return (static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(src))) << 16) |
         static_cast<std::uint16_t>(static_cast<std::int16_t>(dst));
}

// libomptarget's numbering on the project's machines: devices 0..3, the host 4 in data ops, and
// the initializer told 0.
constexpr int kRtHost = 4;

struct TargetRun {
  Synth s{2};
  TargetRun() {
    // Devices 0 (callbacks) and 1 (tracing); a Kokkos host allocation; a code load.
    s.rec(0, 10, Ev::OmpDeviceInit, 0, {nm("tt-gen"), 0});
    s.rec(0, 11, Ev::OmpDeviceInit, 1, {nm("tt-gen"), 1});
    s.alloc(0, 20, "Host", "tt_mirror", 0x1000, 256);
    s.rec(0, 30, Ev::OmpDeviceLoad, 0, {kob::InternTable::kNullName, 0x10, 0x20, 4096, 7});
    // Kokkos kernel 5 opens target region 1 (device 0): alloc, transfer in, submit, a transfer
    // out reported on the other thread, delete.
    s.kernel_begin(0, 100, 5, "tt_kernel");
    s.rec(0, 110, Ev::OmpTargetBegin, 0, {1, 5, 0}, 1);
    s.rec(0, 120, Ev::OmpDataOpBegin, pair(kRtHost, 0), {1, 5, 64, 1, 0, 0}, 1);
    s.rec(0, 125, Ev::OmpDataOpEnd, pair(kRtHost, 0), {1, 5, 64, 1, 0, 0xd000}, 1);  // address known at the end
    s.rec(0, 130, Ev::OmpDataOpBegin, pair(kRtHost, 0), {2, 5, 64, 1, 0, 0xd000}, 2);
    s.rec(0, 135, Ev::OmpDataOpEnd, pair(kRtHost, 0), {2, 5, 64, 1, 0, 0xd000}, 2);
    s.rec(0, 140, Ev::OmpSubmitBegin, 8, {3, 5, 0, 1});
    s.rec(1, 150, Ev::OmpDataOpBegin, pair(0, kRtHost), {4, 5, 64, 1, 0, 0x2000}, 3);
    s.rec(1, 155, Ev::OmpDataOpEnd, pair(0, kRtHost), {4, 5, 64, 1, 0, 0x2000}, 3);
    s.rec(0, 160, Ev::OmpSubmitEnd, 8, {3, 5, 0, 1});
    s.rec(0, 170, Ev::OmpDataOpBegin, pair(0, -1), {5, 5, 0, 1, 0, 0xd000}, 4);
    s.rec(0, 172, Ev::OmpDataOpEnd, pair(0, -1), {5, 5, 0, 1, 0, 0xd000}, 4);
    s.rec(0, 180, Ev::OmpTargetEnd, 0, {1, 5, 0}, 1);
    s.kernel_end(0, 190, 5);
    // Kokkos deep copy 3 moves 256 bytes into the mirror's data (its block + 128-byte header).
    s.copy_begin(0, 200, 3, "Host", "tt_mirror", "Dev", "tt_dev", 256);
    s.rec(0, 210, Ev::OmpDataOpBegin, pair(0, kRtHost), {6, 0, 256, 0, 3, 0x1080}, 3);
    s.rec(0, 230, Ev::OmpDataOpEnd, pair(0, kRtHost), {6, 0, 256, 0, 3, 0x1080}, 3);
    s.copy_end(0, 260, 3);
    // A 5.0 (non-EMI) target region on device 1 with a point data op and a point submit.
    s.rec(0, 265, Ev::OmpTargetBegin, 1, {50, 0, 0}, 1);
    s.rec(0, 270, Ev::OmpDataOp, pair(kRtHost, 1), {77, 0, 32, 50, 0, 0x3000}, 2);
    s.rec(0, 275, Ev::OmpSubmit, 1, {78, 0, 0, 50});
    s.rec(0, 285, Ev::OmpTargetEnd, 1, {50, 0, 0}, 1);
    // Device 1's tracing records (times in the fields, host ns): the data op, a target point.
    s.rec(1, 999999, Ev::OmpDeviceRecord, 1, {77, 50, 280, 290, 32, 2}, 34);
    s.rec(1, 999999, Ev::OmpDeviceRecord, 1, {0, 50, 300, 0, 0, 1}, 33);
    // A nowait region that never ends; the devices finalize.
    s.rec(1, 390, Ev::OmpTargetBegin, 0, {9, 0, 0}, 9);
    s.rec(0, 400, Ev::OmpDeviceFinalize, 0);
    s.rec(0, 401, Ev::OmpDeviceFinalize, 1);
  }
  Timeline build() const { return kob::build_timeline(s.list(), 0); }
};

}  // namespace

TEST_CASE("target: which device numbers are the host") {
  const std::vector<int> four{0, 1, 2, 3};
  CHECK(kob::host_device(-1, 0, four));
  CHECK(kob::host_device(4, 0, four));   // libomptarget's host number: no device_initialize named it
  CHECK_FALSE(kob::host_device(0, 0, four));  // libomp 19 told the initializer 0, a real device
  CHECK_FALSE(kob::host_device(3, 0, four));
  CHECK(kob::host_device(2, 2, {}));      // no device seen: the initial device number decides
  CHECK_FALSE(kob::host_device(0, 2, {}));
  CHECK(kob::host_device(-1, -1, {}));
}

TEST_CASE("target: timeline pairs targets, data ops and submits; the host is -1") {
  RecorderReset reset;
  TargetRun run;
  const Timeline t = run.build();
  CHECK(t.omp_target_records == 26);
  CHECK(t.omp_records == 0);  // no host OpenMP records: no OpenMP section

  REQUIRE(t.omp_targets.size() == 3);
  const kob::OmpTargetSpan& g = t.omp_targets[0];
  CHECK((g.id == 1 && g.kind == 1 && g.device == 0 && g.kernel == 5 && g.track == 0 && g.start == 110 && g.end == 180));
  CHECK((t.omp_targets[1].id == 50 && t.omp_targets[1].device == 1 && t.omp_targets[1].end == 285));
  CHECK((t.omp_targets[2].id == 9 && t.omp_targets[2].kind == 9 && t.omp_targets[2].track == 1));
  CHECK(t.omp_targets[2].end == t.t_end);  // never ended: until the end of the run
  bool noted = false;
  for (const auto& p : t.problems) noted |= p.find("an OpenMP target region never ended") != std::string::npos;
  CHECK(noted);

  REQUIRE(t.omp_data_ops.size() == 6);
  const kob::OmpDataOpSpan& alloc = t.omp_data_ops[0];
  CHECK((alloc.optype == 1 && alloc.start == 120 && alloc.end == 125 && alloc.address == 0xd000));
  CHECK((alloc.src_device == kob::kHostDevice && alloc.dst_device == 0 && alloc.device() == 0));
  CHECK((alloc.host_op_id == 1 && alloc.target_id == 1 && alloc.kernel == 5 && alloc.bytes == 64 && !alloc.point));
  const kob::OmpDataOpSpan& out = t.omp_data_ops[2];
  CHECK((out.track == 1 && out.src_device == 0 && out.dst_device == kob::kHostDevice && out.device() == 0));
  const kob::OmpDataOpSpan& del = t.omp_data_ops[3];
  CHECK((del.optype == 4 && del.src_device == 0 && del.dst_device == kob::kHostDevice));
  const kob::OmpDataOpSpan& copy = t.omp_data_ops[4];
  CHECK((copy.deep_copy == 3 && copy.target_id == 0 && copy.kernel == 0 && copy.bytes == 256));
  const kob::OmpDataOpSpan& point = t.omp_data_ops[5];
  CHECK((point.point && point.start == 270 && point.end == 270 && point.dst_device == 1 && point.target_id == 50));

  REQUIRE(t.omp_submits.size() == 2);
  CHECK((t.omp_submits[0].start == 140 && t.omp_submits[0].end == 160 && t.omp_submits[0].requested_teams == 8));
  CHECK((t.omp_submits[0].kernel == 5 && t.omp_submits[0].target_id == 1 && t.omp_submits[0].host_op_id == 3));
  CHECK((t.omp_submits[1].point && t.omp_submits[1].host_op_id == 78));

  REQUIRE(t.omp_devices.size() == 2);
  CHECK((t.omp_devices[0].num == 0 && t.omp_devices[0].initialised && !t.omp_devices[0].traced));
  CHECK((t.omp_devices[0].type == nm("tt-gen") && t.omp_devices[0].init_time == 10 && t.omp_devices[0].finalize_time == 400));
  CHECK((t.omp_devices[1].num == 1 && t.omp_devices[1].traced));
  REQUIRE(t.omp_device_loads.size() == 1);
  CHECK((t.omp_device_loads[0].device == 0 && t.omp_device_loads[0].bytes == 4096 && t.omp_device_loads[0].module_id == 7));
  CHECK(t.omp_device_loads[0].file == kob::InternTable::kNullName);

  REQUIRE(t.omp_device_ops.size() == 2);
  CHECK((t.omp_device_ops[0].start == 280 && t.omp_device_ops[0].end == 290 && t.omp_device_ops[0].record_type == 34));
  CHECK((t.omp_device_ops[0].host_op_id == 77 && t.omp_device_ops[0].value == 32 && t.omp_device_ops[0].device == 1));
  CHECK((t.omp_device_ops[1].point && t.omp_device_ops[1].end == 300 && t.omp_device_ops[1].op_kind == 1));
  CHECK(t.t0 == 10);  // the device records' tick (999999) is not a time
  CHECK(t.t_end == 401);
}

TEST_CASE("target: Kokkos allocations are numbered and found by address") {
  RecorderReset reset;
  TargetRun run;
  run.s.alloc(1, 500, "Host", "tt_other", 0x9000, 16);
  const Timeline t = run.build();
  REQUIRE(t.memory.size() == 2);
  CHECK((t.memory[0].id == 1 && t.memory[1].id == 2));
  std::uint64_t linked = 0;
  for (const auto& d : t.omp_data_ops) {
    if (d.host_op_id == 6) CHECK(d.kokkos_alloc == 1);  // 0x1080 is inside the block at 0x1000 (header + 256)
    linked += d.kokkos_alloc != 0;
  }
  CHECK(linked == 1);
}

TEST_CASE("target: the host's number from the initializer when no device was initialised") {
  RecorderReset reset;
  Synth s(1);
  s.rec(0, 10, Ev::OmpTargetBegin, 2, {1, 0, 0}, 1);
  s.rec(0, 11, Ev::OmpDataOpBegin, pair(2, 7), {1, 0, 8, 1, 0, 0}, 2);
  s.rec(0, 12, Ev::OmpDataOpEnd, pair(2, 7), {1, 0, 8, 1, 0, 0}, 2);
  s.rec(0, 13, Ev::OmpTargetEnd, 2, {1, 0, 0}, 1);
  const Timeline t = kob::build_timeline(s.list(), 2);
  REQUIRE(t.omp_data_ops.size() == 1);
  CHECK((t.omp_data_ops[0].src_device == kob::kHostDevice && t.omp_data_ops[0].dst_device == 7));
  REQUIRE(t.omp_targets.size() == 1);
  CHECK(t.omp_targets[0].device == kob::kHostDevice);
  CHECK(t.problems.empty());
}

TEST_CASE("target: trace events, device tracks and flows") {
  RecorderReset reset;
  TargetRun run;
  const Timeline t = run.build();
  std::uint64_t clipped = 99;
  const std::string json = kob_test::chrome_trace_text(t, &clipped);
  CHECK(clipped == 0);
  CHECK(kob_test::python_json_check(json, R"PY(
import collections
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert names[1000000] == "device 0 (tt-gen)" and names[1000001] == "device 1 (tt-gen)", names
sort = {e["tid"]: e["args"]["sort_index"] for e in ev if e["ph"] == "M" and e["name"] == "thread_sort_index"}
assert sort[1000000] > sort[1001] and sort[1000001] > sort[1000000], sort
x = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        x[e["cat"]].append(e)
tg = sorted(x["omp.target"], key=lambda e: e["ts"])
assert [(e["name"], e["tid"], e["args"]["target_id"], e["args"]["device"]) for e in tg] == [
    ("target", 1000, 1, 0), ("target", 1000, 50, 1), ("target_nowait", 1001, 9, 0)], tg
assert tg[0]["args"] == {"target_id": 1, "device": 0, "kokkos_kernel": 5} and (tg[0]["ts"], tg[0]["dur"]) == (0.1, 0.07)
ops = sorted(x["omp.target_data"], key=lambda e: e["ts"])
assert [e["name"] for e in ops] == ["alloc", "transfer_to_device", "transfer_from_device", "delete",
                                    "transfer_from_device", "transfer_to_device"], ops
assert ops[0]["args"] == {"host_op_id": 1, "src_device": -1, "dst_device": 0, "bytes": 64, "target_id": 1,
                          "kokkos_kernel": 5}, ops[0]
assert ops[3]["args"]["dst_device"] == -1 and ops[3]["args"]["bytes"] == 0
assert ops[4]["args"] == {"host_op_id": 6, "src_device": 0, "dst_device": -1, "bytes": 256, "kokkos_deep_copy": 3,
                          "kokkos_alloc": 1}, ops[4]
assert ops[5]["dur"] == 0 and ops[5]["args"]["point"] is True and ops[5]["args"]["dst_device"] == 1
sub = sorted(x["omp.target_submit"], key=lambda e: e["ts"])
assert [(e["name"], e["args"]["requested_teams"], e["dur"]) for e in sub] == [("submit", 8, 0.02), ("submit", 1, 0)], sub
assert sub[0]["args"] == {"host_op_id": 3, "requested_teams": 8, "target_id": 1, "kokkos_kernel": 5}
dev = sorted(x["omp.device"], key=lambda e: e["ts"])
assert [(e["name"], e["tid"], e["ts"], e["dur"]) for e in dev] == [
    ("transfer_to_device", 1000001, 0.27, 0.01), ("target", 1000001, 0.29, 0)], dev
assert dev[0]["args"] == {"host_op_id": 77, "target_id": 50, "device": 1, "bytes": 32,
                          "record_type": "target_data_op_emi"}, dev[0]
assert dev[1]["args"]["record_type"] == "target_emi" and dev[1]["args"]["point"] is True
loads = [e for e in ev if e.get("cat") == "omp.device_load"]
assert [(e["tid"], e["args"]["file"], e["args"]["bytes"]) for e in loads] == [(1000000, None, 4096)], loads
inits = [e for e in ev if e.get("cat") == "omp.device_init"]
assert sorted((e["tid"], e["args"]["path"]) for e in inits) == [(1000000, "callbacks"), (1000001, "tracing")]
assert len([e for e in ev if e.get("cat") == "omp.device_finalize"]) == 2
alloc = [e for e in ev if e.get("cat") == "kokkos.alloc"]
assert alloc[0]["args"]["id"] == 1
s = {e["id"]: e for e in ev if e["ph"] == "s"}
f = {e["id"]: e for e in ev if e["ph"] == "f"}
assert s.keys() == f.keys()
fl = sorted((s[i]["name"], s[i]["tid"], s[i]["ts"], f[i]["tid"], f[i]["ts"]) for i in s)
assert fl == [
    ("data op", 1000, 0.1, 1001, 0.14),         # target 1 -> its data op on the other thread
    ("deep copy", 1000, 0.19, 1000, 0.2),       # deep copy -> its transfer
    ("device", 1000, 0.26, 1000001, 0.27),      # host op 77 -> its device record
    ("target", 1000, 0.09, 1000, 0.1),          # kernel 5 -> target 1
], fl
)PY") == 0);
}

TEST_CASE("target: summary per device, device memory, deep copies; text and JSON") {
  RecorderReset reset;
  TargetRun run;
  const Timeline t = run.build();
  const kob::Summary s = kob::summarize(t);
  const kob::TargetSummary& g = s.target;
  REQUIRE(g.present());
  CHECK((g.regions_in_kernels == 1 && g.regions_outside == 2));
  REQUIRE(g.devices.size() == 2);
  const kob::TargetDeviceStats& d0 = g.devices[0];
  CHECK((d0.device == 0 && d0.type == "tt-gen" && d0.path == "callbacks"));
  REQUIRE(d0.regions.size() == 2);
  CHECK((d0.regions[0].name == "target" && d0.regions[0].count == 1 && d0.regions[0].total == 70));
  CHECK((d0.regions[1].name == "target_nowait" && d0.regions[1].count == 1));
  CHECK((d0.submits == 1 && d0.submit_time == 20));
  REQUIRE(d0.data_ops.size() == 4);
  CHECK((d0.data_ops[2].name == "transfer_from_device" && d0.data_ops[2].count == 2 && d0.data_ops[2].bytes == 320));
  REQUIRE(d0.transfers.size() == 2);
  CHECK((d0.transfers[0].name == "host_to_device" && d0.transfers[0].bytes == 64 && d0.transfers[0].time == 5));
  CHECK((d0.transfers[1].name == "device_to_host" && d0.transfers[1].count == 2 && d0.transfers[1].time == 25));
  CHECK((d0.allocations == 1 && d0.deletes == 1 && d0.alloc_high_water == 64 && d0.alloc_final == 0));
  const kob::TargetDeviceStats& d1 = g.devices[1];
  CHECK((d1.device == 1 && d1.path == "tracing" && d1.submits == 1 && d1.device_records == 2));
  REQUIRE(d1.transfers.size() == 1);
  CHECK((d1.transfers[0].bytes == 32 && d1.transfers[0].time == 0 && d1.transfers[0].gb_per_s() == 0.0));
  REQUIRE(g.deep_copies.size() == 1);
  const kob::TargetCopyStats& c = g.deep_copies[0];
  CHECK((c.name == "tt_mirror <- tt_dev" && c.calls == 1 && c.bytes == 256 && c.dst_space == "Host"));
  REQUIRE(c.ops.size() == 1);
  CHECK((c.ops[0].name == "transfer_from_device" && c.ops[0].count == 1 && c.ops[0].bytes == 256));

  const std::string text = kob::summary_text(s, "tt");
  CHECK(text.find("\nOpenMP target\n") != std::string::npos);
  CHECK(text.find("device 1 (tt-gen, tracing)") != std::string::npos);
  CHECK(text.find("high-water 64 B") != std::string::npos);
  CHECK(text.find("tt_mirror <- tt_dev (Host <- Dev): 1 call, 256 B: transfer_from_device 1 (256 B)") != std::string::npos);
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), R"PY(
g = d["target"]
assert (g["regions_in_kernels"], g["regions_outside_kernels"]) == (1, 2), g
d0, d1 = g["devices"]
assert (d0["device"], d0["type"], d0["path"], d0["submits"]) == (0, "tt-gen", "callbacks", 1), d0
assert d0["target_regions"] == {"target": 1, "target_nowait": 1}, d0
assert d0["data_ops"]["alloc"] == {"count": 1, "bytes": 64, "time_ns": 5}, d0
assert d0["transfers"]["device_to_host"]["bandwidth_gb_per_s"] == 320 / 25, d0
assert (d0["alloc_high_water_bytes"], d0["alloc_final_bytes"], d0["deletes"]) == (64, 0, 1), d0
assert (d1["path"], d1["device_records"]) == ("tracing", 2), d1
assert g["deep_copies"] == [{"name": "tt_mirror <- tt_dev", "dst_space": "Host", "src_space": "Dev", "calls": 1, "bytes": 256,
                             "data_ops": {"transfer_from_device": {"count": 1, "bytes": 256, "time_ns": 20}}}], g
)PY") == 0);
}

TEST_CASE("target: no target records, no target section") {
  RecorderReset reset;
  Synth s(1);
  s.kernel_begin(0, 1, 1, "tt_plain");
  s.kernel_end(0, 2, 1);
  const kob::Summary sum = kob::summarize(s.build());
  CHECK_FALSE(sum.target.present());
  CHECK(kob::summary_text(sum, "x").find("OpenMP target") == std::string::npos);
  CHECK(kob_test::python_json_check(kob::summary_json(sum, "{}"),
                                    "assert d['target'] == {'records': 0, 'regions_in_kernels': 0, "
                                    "'regions_outside_kernels': 0, 'devices': [], 'deep_copies': []}, d['target']") == 0);
}
