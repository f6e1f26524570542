"""A plain OpenMP offload program (host offload, no Kokkos) with OMP_TOOL_LIBRARIES: the exact
target regions, data operations, submits and devices that the sample's header lists, as trace
events, device tracks and summary figures. The host is device -1 in the trace (libomptarget
reports it as 4, omp_get_initial_device())."""
import argparse
import os
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--events", default="", help="--events= for the tool (default: all groups)")
a = ap.parse_args()
prog, lib, T = os.path.abspath(a.program), os.path.abspath(a.lib), a.threads
only_target = a.events != ""

HOST = -1
STDOUT = ("map: y sum = 4500, z sum = 62250\n"
          "target data: d sum = 45150\n"
          "enter/exit data: f sum = 600\n"
          "device memory: buf sum = 6048\n"
          "done\n")

env = {"OMP_NUM_THREADS": str(T), "KMP_WARNINGS": "0"}
base_rc, base_out, _ = kc.run([prog], env, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOKKOS_PROFILE_LIBRARY"))
kc.expect_eq((base_rc, base_out), (0, STDOUT), "the sample alone: exit code and stdout")
wd = kc.workdir()
prefix = os.path.join(wd, "out")
args = f"--output={prefix} --quiet {kc.CHROME}" + (f" --events={a.events}" if a.events else "")
env.update({"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
rc, out, err = kc.run([prog], env, cwd=wd, unset=("LD_PRELOAD", "KOKKOS_PROFILE_LIBRARY"))
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
kc.expect_eq([l for l in err.splitlines() if "warning" in l.lower()], [], "no warnings")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
ev = trace["traceEvents"]
other = trace["otherData"]
kc.expect_eq([e for e in ev if str(e.get("cat", "")).startswith("kokkos.")], [], "no Kokkos events")
cbs = other.get("ompt_callbacks", {})
for name in ("target_emi", "target_data_op_emi", "target_submit_emi", "device_initialize", "device_finalize", "device_load"):
    kc.expect_eq(cbs.get(name), "always", f"{name} registered")
for name in ("target", "target_data_op", "target_submit"):
    kc.check(name not in cbs, f"the 5.0 form {name} is not tried when the EMI one is delivered")
if only_target:
    kc.expect_eq([e for e in ev if e.get("cat") in ("omp.parallel", "omp.implicit_task", "omp.sync", "omp.work")], [],
                 "--events=omp-target: no host OpenMP spans")

# ---- devices: 4 tracks "device N (generic-64bit)", tid 1000000 + N, after the host threads ----
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
sort_idx = {e["tid"]: e["args"]["sort_index"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_sort_index"}
dev_tids = sorted(t for t in names if names[t].startswith("device "))
kc.expect_eq(dev_tids, [1000000, 1000001, 1000002, 1000003], "device track tids")
for n, tid in enumerate(dev_tids):
    kc.expect_eq(names[tid], f"device {n} (generic-64bit)", "device track name")
host_idx = [sort_idx[t] for t in names if t not in dev_tids]
kc.check(all(sort_idx[t] > max(host_idx) for t in dev_tids), "device tracks sort after the host threads")
inits = kc.events(trace, "omp.device_init", "i")
kc.expect_eq(sorted((e["tid"], e["args"]["device"], e["args"]["type"], e["args"]["path"]) for e in inits),
             [(1000000 + n, n, "generic-64bit", "callbacks") for n in range(4)], "device_initialize x4")
kc.expect_eq(sorted(e["tid"] for e in kc.events(trace, "omp.device_finalize", "i")), dev_tids, "device_finalize x4")
loads = kc.events(trace, "omp.device_load", "i")
kc.expect_eq([(e["tid"], e["args"]["device"], e["args"]["file"]) for e in loads], [(1000000, 0, None)], "device_load x1")
kc.check(all(isinstance(e["args"].get("bytes"), int) for e in loads), "device_load carries bytes")
kc.expect_eq(kc.events(trace, "omp.device"), [], "no device tracing records (libomptarget 22 has no device tracing)")

# ---- target regions: 10, in program order, all on the main thread, device 0, none nested ----
targets = sorted(kc.events(trace, "omp.target", "X"), key=lambda e: e["ts"])
kc.expect_eq([kc.construct(t) for t in targets],
             ["target", "target_enter_data", "target", "target_exit_data",
              "target_enter_data", "target_update", "target", "target_update", "target_exit_data", "target"],
             "target regions in order")
kc.expect_eq(Counter(kc.construct(t) for t in targets),
             Counter({"target": 4, "target_enter_data": 2, "target_exit_data": 2, "target_update": 2}), "target regions by kind")
kc.expect_eq({t["args"]["device"] for t in targets}, {0}, "every target region on device 0")
main_tid = targets[0]["tid"] if targets else None
kc.expect_eq({t["tid"] for t in targets}, {main_tid}, "target regions on the main thread")
tids = [t["args"]["target_id"] for t in targets]
kc.expect_eq(len(set(tids)), len(tids), "target ids unique")
kc.check(all(t["args"]["target_id"] > 0 for t in targets), "target ids non-zero")
for x, y in zip(targets, targets[1:]):
    kc.check(x["ts"] + x["dur"] <= y["ts"] + 1e-9, f"target regions do not nest: {x['name']} and {y['name']}")
kc.check(all("kokkos_kernel" not in t["args"] and "kokkos_deep_copy" not in t["args"] for t in targets), "no Kokkos ids")
by_tid = {t["args"]["target_id"]: t for t in targets}

# ---- submits: one per `target` region, requested_teams 4, 1, 1, 1 ----
subs = sorted(kc.events(trace, "omp.target_submit", "X"), key=lambda e: e["ts"])
kc.expect_eq([s["name"] for s in subs], ["submit"] * 4, "submits")
kc.expect_eq([s["args"]["requested_teams"] for s in subs], [4, 1, 1, 1], "requested teams")
kc.expect_eq([s["args"].get("target_id") for s in subs],
             [t["args"]["target_id"] for t in targets if kc.construct(t) == "target"], "each submit in its target region")
for s in subs:
    t = by_tid.get(s["args"].get("target_id"))
    kc.check(t is not None and t["tid"] == s["tid"] and kc.inside(s, t), f"submit {s['args']} inside its target region")

# ---- data ops: 25, exact sequence per region ----
ops = sorted(kc.events(trace, "omp.target_data", "X"), key=lambda e: e["ts"])
kc.expect_eq({o["tid"] for o in ops}, {main_tid}, "data ops on the main thread")
hop = [o["args"]["host_op_id"] for o in ops] + [s["args"]["host_op_id"] for s in subs]
kc.expect_eq(len(set(hop)), len(hop), "host op ids unique over data ops and submits")
kc.check(all(h > 0 for h in hop), "host op ids non-zero")
kc.check(all(not o["args"].get("point") for o in ops + subs), "EMI: data ops and submits are spans, not points")
counts = Counter(o["name"] for o in ops)
byte_sums = Counter()
for o in ops:
    byte_sums[o["name"]] += o["args"]["bytes"]
kc.expect_eq(counts, Counter({"alloc": 7, "transfer_to_device": 6, "transfer_from_device": 5, "delete": 7}), "data ops by type")
kc.expect_eq(dict(byte_sums), {"alloc": 17112, "transfer_to_device": 13512, "transfer_from_device": 8312, "delete": 0},
             "data op bytes by type")
DEVS = {"alloc": (HOST, 0), "transfer_to_device": (HOST, 0), "transfer_from_device": (0, HOST), "delete": (0, HOST)}
for o in ops:
    kc.expect_eq((o["args"]["src_device"], o["args"]["dst_device"]), DEVS[o["name"]], f"{o['name']} src/dst devices")


def seq(lst):
    return [(o["name"], o["args"]["bytes"]) for o in lst]


inside = [o for o in ops if "target_id" in o["args"]]
outside = [o for o in ops if "target_id" not in o["args"]]
kc.expect_eq(len(inside), 21, "data ops in target regions")
for o in inside:
    t = by_tid.get(o["args"]["target_id"])
    kc.check(t is not None and kc.inside(o, t), f"data op {o['args']} inside its target region")
per_region = [seq([o for o in inside if o["args"]["target_id"] == t["args"]["target_id"]]) for t in targets]
kc.expect_eq(per_region, [
    [("alloc", 4000), ("alloc", 8000), ("transfer_to_device", 8000), ("alloc", 1000), ("transfer_to_device", 1000),
     ("transfer_from_device", 1000), ("transfer_from_device", 4000), ("delete", 0), ("delete", 0), ("delete", 0)],
    [("alloc", 2400), ("transfer_to_device", 2400)],
    [],
    [("transfer_from_device", 2400), ("delete", 0)],
    [("alloc", 800), ("transfer_to_device", 800), ("alloc", 400)],
    [("transfer_to_device", 800)],
    [],
    [("transfer_from_device", 400)],
    [("delete", 0), ("delete", 0)],
    [],
], "data ops of each target region, in order")
kc.expect_eq(seq(outside), [("alloc", 512), ("transfer_to_device", 512), ("transfer_from_device", 512), ("delete", 0)],
             "omp_target_alloc / memcpy / memcpy / free outside any target region")
t4 = targets[-1]
kc.check(len(outside) == 4 and outside[1]["ts"] < t4["ts"] and t4["ts"] + t4["dur"] <= outside[2]["ts"] + 1e-9,
         "T4: the memcpys around the is_device_ptr target region")

# All on one thread, no Kokkos: no target, data-op, submit, deep-copy or device flows.
flow_names = Counter(e["name"] for e in ev if e.get("ph") == "s" and e.get("cat") == "correlation")
kc.expect_eq({n: c for n, c in flow_names.items() if n in ("target", "submit", "data op", "deep copy", "device")}, {},
             "no target flows (one thread, no Kokkos)")

# ---- summary ----
tg = summary.get("target", {})
kc.expect_eq((tg.get("regions_in_kernels"), tg.get("regions_outside_kernels")), (0, 10), "summary: regions outside Kokkos")
devs = {d["device"]: d for d in tg.get("devices", [])}
kc.expect_eq(sorted(devs), [0, 1, 2, 3], "summary: devices")
d0 = devs.get(0, {})
kc.expect_eq((d0.get("type"), d0.get("path")), ("generic-64bit", "callbacks"), "summary: device 0 type and path")
kc.expect_eq(d0.get("target_regions"), {"target": 4, "target_enter_data": 2, "target_exit_data": 2, "target_update": 2},
             "summary: regions by kind")
kc.expect_eq(d0.get("submits"), 4, "summary: submits")
kc.expect_eq({k: (v["count"], v["bytes"]) for k, v in d0.get("data_ops", {}).items()},
             {"alloc": (7, 17112), "transfer_to_device": (6, 13512), "transfer_from_device": (5, 8312), "delete": (7, 0)},
             "summary: data ops")
kc.expect_eq({k: (v["count"], v["bytes"]) for k, v in d0.get("transfers", {}).items()},
             {"host_to_device": (6, 13512), "device_to_host": (5, 8312)}, "summary: transfers by direction")
kc.check(all(v["bandwidth_gb_per_s"] > 0 for v in d0.get("transfers", {}).values()), "summary: bandwidths")
# T1 holds y, x and z (4000 + 8000 + 1000) at once; later parts hold less; all freed.
kc.expect_eq((d0.get("allocations"), d0.get("deletes"), d0.get("alloc_bytes"), d0.get("alloc_high_water_bytes"),
              d0.get("alloc_final_bytes")), (7, 7, 17112, 13000, 0), "summary: device memory")
for n in (1, 2, 3):
    d = devs.get(n, {})
    kc.expect_eq((d.get("type"), d.get("submits"), d.get("data_ops"), d.get("target_regions")),
                 ("generic-64bit", 0, {}, {}), f"summary: device {n} unused")
kc.expect_eq(tg.get("deep_copies"), [], "summary: no Kokkos deep copies")
with open(prefix + ".summary.txt") as f:
    text = f.read()
kc.check("\nOpenMP target\n" in text and "device 0 (generic-64bit, callbacks)" in text, "text summary has the target section")
kc.finish()
