"""A Kokkos program on the OpenMP backend under both halves of the library: every kernel's
parallel region and implicit tasks carry the kernel's id, on every thread, through each route."""
import argparse
import os
from collections import Counter, defaultdict

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--route", choices=["omp-tool-libraries", "ld-preload", "kokkos-only"], required=True)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--no-finalize", action="store_true")
a = ap.parse_args()
prog, lib, T = os.path.abspath(a.program), os.path.abspath(a.lib), a.threads
extra = ["--no-finalize"] if a.no_finalize else []

env = {"OMP_NUM_THREADS": str(T)}
base_rc, base_out, _ = kc.run([prog] + extra, env, unset=("KOKKOS_PROFILE_LIBRARY", "OMP_TOOL_LIBRARIES", "LD_PRELOAD"))
wd = kc.workdir()
prefix = os.path.join(wd, "out")
report = kc.written_report()
env.update({"KOKKOS_PROFILE_LIBRARY": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}", "KOB_RUN_REPORT": report})
if a.route == "omp-tool-libraries":
    env["OMP_TOOL_LIBRARIES"] = lib
elif a.route == "ld-preload":
    env["LD_PRELOAD"] = lib
rc, out, err = kc.run([prog] + extra, env, cwd=wd, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD"))
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
kc.expect_eq(len(kc.written(report)), 1, "files written exactly once")
kc.expect_eq(sorted(os.listdir(wd)), ["out.kob", "out.summary.json", "out.summary.txt", "out.trace.json"], "one set of files and the raw trace")
hint = [l for l in err.splitlines() if "OMP_TOOL_LIBRARIES=" in l]

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kernels = kc.events(trace, "kokkos.kernel", "X")
by_id = {k["args"]["id"]: k for k in kernels}
par = kc.events(trace, "omp.parallel", "X")

if a.route == "kokkos-only":
    kc.expect_eq(len(hint), 1, "one warning naming OMP_TOOL_LIBRARIES")
    if hint:
        kc.check(hint[0].endswith("OMP_TOOL_LIBRARIES=" + os.path.realpath(lib)), f"the hint names the absolute path: {hint[0]}")
    kc.expect_eq([e for e in trace["traceEvents"] if str(e.get("cat", "")).startswith("omp.")], [], "no OpenMP events")
    kc.check(len(kernels) >= 22, "Kokkos events still recorded")
    kc.finish()

kc.expect_eq(hint, [], "no OMP_TOOL_LIBRARIES hint when the OpenMP route is set")
# Kokkos 3.4.1 names device id 0 (Serial) for View initialization kernels, which its OpenMP backend
# runs in a parallel region: the summary shows what ran, marked as inferred; the others as named.
devices = {k["name"]: k["device"] for k in summary["kernels"]}
inits = {n: d for n, d in devices.items() if n.startswith("Kokkos::View::initialization [")}
kc.check(inits and set(inits.values()) == {"OpenMP (inferred)"}, f"View initialization kernels: OpenMP (inferred): {inits}")
kc.expect_eq({d for n, d in devices.items() if n not in inits}, {"OpenMP"}, "the other kernels' device: OpenMP, as Kokkos named it")
kc.check(trace["otherData"]["openmp_runtime"] != "", "otherData names the OpenMP runtime")
kc.expect_eq(trace["otherData"].get("ompt_callbacks", {}).get("parallel_begin"), "always", "parallel_begin registered")

# Kokkos opens 3 parallel regions in initialize before the tool's init and 2 in finalize after it.
outside = 3 + (0 if a.no_finalize else 2)
kc.expect_eq(len(par), len(kernels) + outside, "parallel regions = Kokkos kernels + initialize/finalize regions")
par_by_kernel = defaultdict(list)
for p in par:
    par_by_kernel[p["args"].get("kokkos_kernel", 0)].append(p)
kc.expect_eq(len(par_by_kernel.get(0, [])), outside, "parallel regions outside any kernel")
for k in kernels:
    ps = par_by_kernel.get(k["args"]["id"], [])
    if kc.expect_eq(len(ps), 1, f"one omp.parallel for kernel {k['name']} (id {k['args']['id']})"):
        kc.expect_eq(ps[0]["tid"], k["tid"], f"parallel region of {k['name']} is on the kernel's thread")
        kc.check(kc.inside(ps[0], k), f"parallel region of {k['name']} lies inside the kernel")

tasks = [t for t in kc.events(trace, "omp.implicit_task", "X") if t["name"] == "implicit task"]
kc.expect_eq(len(tasks), T * len(par), "implicit tasks = team size x parallel regions")
tasks_by_par = defaultdict(list)
for t in tasks:
    tasks_by_par[t["args"]["parallel_id"]].append(t)
for p in par:
    ts = tasks_by_par.get(p["args"]["parallel_id"], [])
    kc.expect_eq(sorted(t["args"]["thread_num"] for t in ts), list(range(T)), f"thread numbers of region {p['args']['parallel_id']}")
    kc.expect_eq(len({t["tid"] for t in ts}), T, f"region {p['args']['parallel_id']} runs on {T} threads")
    kc.expect_eq(p["args"]["team_size"], T, "team size")
    for t in ts:
        kc.expect_eq(t["args"]["team_size"], T, "implicit task team size")
        kc.expect_eq(t["args"].get("kokkos_kernel", 0), p["args"].get("kokkos_kernel", 0),
                     "implicit tasks carry their region's kernel, on worker threads too")
        kk = p["args"].get("kokkos_kernel")
        if kk in by_id:
            kc.check(kc.inside(t, by_id[kk]), "implicit task lies within its kernel's time")

# Every omp.* event naming a kernel names a real one, and on the kernel's own thread lies inside it.
for e in trace["traceEvents"]:
    if not str(e.get("cat", "")).startswith("omp.") or "kokkos_kernel" not in e.get("args", {}):
        continue
    kk = e["args"]["kokkos_kernel"]
    if not kc.check(kk in by_id, f"{e['cat']} names kernel id {kk} that exists"):
        continue
    if e["tid"] == by_id[kk]["tid"] and e.get("ph") == "X":
        kc.check(kc.inside(e, by_id[kk]), f"{e['cat']} {e['name']} lies inside kernel {kk} on its thread")

barriers = [s for s in kc.events(trace, "omp.sync", "X") if kc.construct(s) == "barrier_implicit_parallel"]
kc.expect_eq(len(barriers), T * len(par) if T > 1 else 0, "one implicit barrier per thread per region")
for s in kc.events(trace, "omp.sync", "X"):
    kc.check(0 <= s["args"]["wait_ns"] <= round(s["dur"] * 1000) + 1, "wait_ns within the sync region")

flows = [f for f in trace["traceEvents"] if f.get("cat") == "correlation" and f.get("ph") == "s"]
kc.check(len(flows) >= len(kernels), f"a flow from each kernel to its region ({len(flows)} flows)")

om = summary.get("openmp", {})
kc.expect_eq(om.get("parallel_regions"), len(par), "summary: parallel regions")
kc.expect_eq(om.get("outside_kokkos", {}).get("parallel_regions"), outside, "summary: regions outside Kokkos kernels")
for k in om.get("kernels", []):
    kc.expect_eq(k.get("regions_per_call"), 1, f"summary: regions per call of {k.get('name')}")
    kc.expect_eq(k.get("mean_team_size"), T, f"summary: team size of {k.get('name')}")
    kc.check(0 <= k.get("load_imbalance", -1) <= 1, "summary: load imbalance in [0,1]")
kc.expect_eq(len(om.get("kernels", [])), len({(k["name"], k["args"]["kind"]) for k in kernels}), "summary: one row per kernel")
kc.finish()
