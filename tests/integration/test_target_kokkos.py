"""A Kokkos program on the OpenMPTarget backend (host offload) under both halves of the library
(KOKKOS_PROFILE_LIBRARY + OMP_TOOL_LIBRARIES): each device kernel is linked to the one target
region it opened (carrying its id), each deep copy to the transfers of its size, and the counts
of target regions, data operations and submits are the sample header's."""
import argparse
import os
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--threads", type=int, default=2)
a = ap.parse_args()
prog, lib, T = os.path.abspath(a.program), os.path.abspath(a.lib), a.threads

HOST = -1
STDOUT = "dot = 65439\nsum b = 16369\nsum c = 36855\ndone\n"

env = {"OMP_NUM_THREADS": str(T), "KMP_WARNINGS": "0"}
base_rc, base_out, _ = kc.run([prog], env, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOKKOS_PROFILE_LIBRARY"))
kc.expect_eq((base_rc, base_out), (0, STDOUT), "the sample alone: exit code and stdout")
wd = kc.workdir()
prefix = os.path.join(wd, "out")
report = kc.written_report()
env.update({"OMP_TOOL_LIBRARIES": lib, "KOKKOS_PROFILE_LIBRARY": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}",
            "KOB_RUN_REPORT": report})
rc, out, err = kc.run([prog], env, cwd=wd, unset=("LD_PRELOAD",))
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
kc.expect_eq([l for l in err.splitlines() if "warning" in l.lower()], [], "no warnings")
kc.expect_eq(len(kc.written(report)), 1, "files written exactly once")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
ev = trace["traceEvents"]

# ---- Kokkos side ----
kernels = sorted(kc.events(trace, "kokkos.kernel", "X"), key=lambda e: e["ts"])
kc.expect_eq([k["name"] for k in kernels],
             ["Kokkos::View::initialization [a]", "Kokkos::View::initialization [b]",
              "Kokkos::View::initialization [a_mirror]", "Kokkos::View::initialization [b_mirror]",
              "axpy", "dot", "scale", "Kokkos::View::initialization [c]"], "Kokkos kernels in order")
kid = {k["name"]: k["args"]["id"] for k in kernels}
kernel_by_id = {k["args"]["id"]: k for k in kernels}
copies = sorted(kc.events(trace, "kokkos.deep_copy", "X"), key=lambda e: e["ts"])
kc.expect_eq([(c["name"], c["args"]["bytes"]) for c in copies],
             [("a <- a_mirror", 32768), ("b <- b_mirror", 16384), ("c <- a", 32768), ("b_mirror <- b", 16384),
              ("a_mirror <- c", 32768)], "deep copies in order")
allocs = kc.events(trace, "kokkos.alloc", "i")
kc.expect_eq(sorted((e["name"], e["args"].get("id")) for e in allocs), [("a_mirror", 1), ("b_mirror", 2)],
             "Kokkos allocations numbered in time order")
alloc_id = {e["name"]: e["args"].get("id") for e in allocs}

# ---- devices ----
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
kc.expect_eq(sorted((t, n) for t, n in names.items() if n.startswith("device ")),
             [(1000000 + n, f"device {n} (generic-64bit)") for n in range(4)], "device tracks")
kc.expect_eq([(e["tid"], e["args"]["file"]) for e in kc.events(trace, "omp.device_load", "i")], [(1000000, None)],
             "one device_load, device 0, no file name")

# ---- target regions: 6, one per device kernel, each carrying its kernel's id ----
targets = sorted(kc.events(trace, "omp.target", "X"), key=lambda e: e["ts"])
kc.expect_eq(Counter(t["name"] for t in targets), Counter({"target": 6}), "target regions by kind")
kc.expect_eq({t["args"]["device"] for t in targets}, {0}, "target regions on device 0")
device_kernels = ["Kokkos::View::initialization [a]", "Kokkos::View::initialization [b]", "axpy", "dot", "scale",
                  "Kokkos::View::initialization [c]"]
kc.expect_eq([kernel_by_id.get(t["args"].get("kokkos_kernel"), {}).get("name") for t in targets], device_kernels,
             "each target region carries its kernel's id, in order")
per_kernel = Counter(t["args"].get("kokkos_kernel") for t in targets)
kc.expect_eq(sorted(per_kernel.values()), [1] * 6, "one target region per device kernel")
for t in targets:
    k = kernel_by_id.get(t["args"].get("kokkos_kernel"))
    kc.check(k is not None and k["tid"] == t["tid"] and kc.inside(t, k), f"target {t['args']} inside its kernel")
by_target = {t["args"]["target_id"]: t for t in targets}
kc.expect_eq(len(by_target), 6, "target ids unique")

# ---- submits: 6, requested_teams 0 x5 and 512 for "dot" ----
subs = sorted(kc.events(trace, "omp.target_submit", "X"), key=lambda e: e["ts"])
kc.expect_eq([(kernel_by_id.get(s["args"].get("kokkos_kernel"), {}).get("name"), s["args"]["requested_teams"]) for s in subs],
             [(n, 512 if n == "dot" else 0) for n in device_kernels], "submits: kernel and requested teams")
for s in subs:
    t = by_target.get(s["args"].get("target_id"))
    kc.check(t is not None and kc.inside(s, t) and t["args"]["kokkos_kernel"] == s["args"]["kokkos_kernel"],
             f"submit {s['args']} inside its target region")

# ---- data ops: 48 ----
ops = sorted(kc.events(trace, "omp.target_data", "X"), key=lambda e: e["ts"])
count = Counter(o["name"] for o in ops)
nbytes = Counter()
for o in ops:
    nbytes[o["name"]] += o["args"]["bytes"]
kc.expect_eq(count, Counter({"alloc": 10, "transfer_to_device": 13, "transfer_from_device": 15, "delete": 10}), "data ops by type")
kc.expect_eq(dict(nbytes), {"alloc": 82600, "transfer_to_device": 82600, "transfer_from_device": 83336, "delete": 0},
             "data op bytes by type")
DEVS = {"alloc": (HOST, 0), "transfer_to_device": (HOST, 0), "transfer_from_device": (0, HOST), "delete": (0, HOST)}
for o in ops:
    kc.expect_eq((o["args"]["src_device"], o["args"]["dst_device"]), DEVS[o["name"]], f"{o['name']} src/dst devices")
hop = [o["args"]["host_op_id"] for o in ops] + [s["args"]["host_op_id"] for s in subs]
kc.expect_eq(len(set(hop)), len(hop), "host op ids unique")
in_kernel = [o for o in ops if "target_id" in o["args"]]
in_copy = [o for o in ops if "kokkos_deep_copy" in o["args"]]
rest = [o for o in ops if "target_id" not in o["args"] and "kokkos_deep_copy" not in o["args"]]
kc.expect_eq((len(in_kernel), len(in_copy), len(rest)), (22, 6, 20), "data ops: in kernels, in deep copies, outside hooks")
kc.check(all("kokkos_kernel" not in o["args"] for o in in_copy + rest), "no kernel id outside the kernels")


def seq(lst):
    return [(o["name"], o["args"]["bytes"]) for o in lst]


FUNCTOR = {"Kokkos::View::initialization [a]": 56, "Kokkos::View::initialization [b]": 56,
           "Kokkos::View::initialization [c]": 56, "axpy": 48, "scale": 24}
for t in targets:
    name = kernel_by_id[t["args"]["kokkos_kernel"]]["name"]
    mine = [o for o in in_kernel if o["args"]["target_id"] == t["args"]["target_id"]]
    kc.check(all(o["args"].get("kokkos_kernel") == t["args"]["kokkos_kernel"] and kc.inside(o, t) for o in mine),
             f"{name}: its data ops carry its kernel id and lie inside its target region")
    if name == "dot":
        want = [("alloc", 48), ("transfer_to_device", 48), ("alloc", 8), ("transfer_to_device", 8),
                ("transfer_from_device", 8), ("delete", 0), ("delete", 0)]
    else:
        want = [("alloc", FUNCTOR[name]), ("transfer_to_device", FUNCTOR[name]), ("delete", 0)]
    kc.expect_eq(seq(mine), want, f"{name}: data ops in order")

# Each deep copy: the transfers it caused, of its size, inside it, linked by a flow.
copy_ops = {c["args"]["id"]: [o for o in in_copy if o["args"]["kokkos_deep_copy"] == c["args"]["id"]] for c in copies}
kc.expect_eq([seq(copy_ops[c["args"]["id"]]) for c in copies],
             [[("transfer_to_device", 32768)], [("transfer_to_device", 16384)],
              [("transfer_from_device", 32768), ("transfer_to_device", 32768)],
              [("transfer_from_device", 16384)], [("transfer_from_device", 32768)]], "data ops of each deep copy")
for c in copies:
    for o in copy_ops[c["args"]["id"]]:
        kc.check(o["args"]["bytes"] == c["args"]["bytes"] and o["tid"] == c["tid"] and kc.inside(o, c),
                 f"deep copy {c['name']}: op {o['args']} of its size, inside it")
# The device -> host copies land in the host mirrors: named by their Kokkos allocation.
kc.expect_eq([(c["name"], [o["args"].get("kokkos_alloc") for o in copy_ops[c["args"]["id"]]]) for c in copies],
             [("a <- a_mirror", [None]), ("b <- b_mirror", [None]), ("c <- a", [None, None]),
              ("b_mirror <- b", [alloc_id.get("b_mirror")]), ("a_mirror <- c", [alloc_id.get("a_mirror")])],
             "kokkos_alloc: the host mirror a transfer writes into")

# ---- flows ----
starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "correlation"}
ends = {e["id"]: e for e in ev if e.get("ph") == "f" and e.get("cat") == "correlation"}
flows = [(s, ends.get(i)) for i, s in starts.items()]
kc.check(all(f is not None for _, f in flows), "every flow start has its end")
fc = Counter(s["name"] for s, _ in flows)
kc.expect_eq((fc["target"], fc["deep copy"], fc["submit"], fc["data op"], fc["device"]), (6, 6, 0, 0, 0),
             "flows: kernel -> target 6, deep copy -> data op 6, none to the same track, no device records")
t_by_ts = {(t["tid"], t["ts"]): t for t in targets}
for s, f in flows:
    if s["name"] == "target" and f:
        t = t_by_ts.get((f["tid"], f["ts"]))
        k = kernel_by_id.get(t["args"]["kokkos_kernel"]) if t else None
        kc.check(k is not None and (s["tid"], s["ts"]) == (k["tid"], k["ts"]), f"target flow from its kernel: {s}")
op_by_ts = {(o["tid"], o["ts"]): o for o in in_copy}
copy_by_id = {c["args"]["id"]: c for c in copies}
for s, f in flows:
    if s["name"] == "deep copy" and f:
        o = op_by_ts.get((f["tid"], f["ts"]))
        c = copy_by_id.get(o["args"]["kokkos_deep_copy"]) if o else None
        kc.check(c is not None and (s["tid"], s["ts"]) == (c["tid"], c["ts"]), f"deep copy flow from its deep copy: {s}")

# ---- summary ----
tg = summary.get("target", {})
kc.expect_eq((tg.get("regions_in_kernels"), tg.get("regions_outside_kernels")), (6, 0), "summary: regions in kernels")
d0 = {d["device"]: d for d in tg.get("devices", [])}.get(0, {})
kc.expect_eq((d0.get("target_regions"), d0.get("submits")), ({"target": 6}, 6), "summary: regions and submits")
kc.expect_eq({k: (v["count"], v["bytes"]) for k, v in d0.get("data_ops", {}).items()},
             {"alloc": (10, 82600), "transfer_to_device": (13, 82600), "transfer_from_device": (15, 83336), "delete": (10, 0)},
             "summary: data ops")
kc.expect_eq({k: (v["count"], v["bytes"]) for k, v in d0.get("transfers", {}).items()},
             {"host_to_device": (13, 82600), "device_to_host": (15, 83336)}, "summary: transfers by direction")
kc.expect_eq((d0.get("allocations"), d0.get("deletes"), d0.get("alloc_final_bytes")), (10, 10, 0), "summary: device memory")
# a, b and c (with their headers) are live together, plus the functor of c's initialization kernel.
kc.expect_eq(d0.get("alloc_high_water_bytes"), 32896 + 16512 + 32896 + 56, "summary: device allocation high-water")
kc.expect_eq([(c["name"], c["calls"], c["bytes"], {k: (v["count"], v["bytes"]) for k, v in c["data_ops"].items()})
              for c in tg.get("deep_copies", [])],
             [("a <- a_mirror", 1, 32768, {"transfer_to_device": (1, 32768)}),
              ("b <- b_mirror", 1, 16384, {"transfer_to_device": (1, 16384)}),
              ("c <- a", 1, 32768, {"transfer_to_device": (1, 32768), "transfer_from_device": (1, 32768)}),
              ("b_mirror <- b", 1, 16384, {"transfer_from_device": (1, 16384)}),
              ("a_mirror <- c", 1, 32768, {"transfer_from_device": (1, 32768)})], "summary: deep copies and their transfers")
kc.finish()
