"""Runs samples/kokkos_sample under the library, loaded the way users load it, and checks the
exact Kokkos records the sample's header comment promises."""
import argparse
import os
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--route", choices=["env", "cmdline"], required=True)
ap.add_argument("--backend", choices=["serial", "openmp"], required=True)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--no-finalize", action="store_true")
a = ap.parse_args()

lib = os.path.abspath(a.lib)
a.program = os.path.abspath(a.program)
K = a.threads if a.backend == "openmp" else 1
env = {"OMP_NUM_THREADS": str(a.threads)}
extra = ["--no-finalize"] if a.no_finalize else []

# The program alone: its output and exit code are what the tool must not change.
base_rc, base_out, _ = kc.run([a.program] + extra, env, unset=("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS"))
kc.expect_eq(base_rc, 0, "sample exit code without the tool")

wd = kc.workdir()
prefix = os.path.join(wd, "out")
if a.route == "env":
    cmd = [a.program] + extra
    env.update({"KOKKOS_PROFILE_LIBRARY": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"})
else:
    cmd = [a.program, f"--kokkos-tools-library={lib}", f"--kokkos-tools-args=--output={prefix} --quiet {kc.CHROME}"] + extra
report = kc.written_report()
rc, out, err = kc.run(cmd, {**env, "KOB_RUN_REPORT": report}, cwd=wd)
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
written = kc.written(report)
kc.check(len(written) == 1 and written[0][1][:2] == [prefix + ".kob", prefix + ".trace.json"], f"the files written, once: {written}")
kc.check(" wrote " not in err, "--quiet: no line naming the files")
kc.check("summary:" not in err, "--quiet keeps the summary off stderr")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kc.expect_eq(trace["otherData"]["kokkos_interface_version"], 20210225, "Kokkos interface version")
kc.expect_eq(trace["otherData"]["dropped_events"], 0, "dropped events")
kc.check(len(trace["otherData"]["metadata"]) > 0, "declare_metadata keys are in otherData")

user_devid = 0x01000000 if a.backend == "openmp" else 0
user_device = "OpenMP" if a.backend == "openmp" else "Serial"

# name -> (kind, calls, region at begin, devid)
expected = {
    "Kokkos::View::initialization [x]": ("parallel_for", 1, "setup", 0),
    "Kokkos::View::initialization [y]": ("parallel_for", 1, "setup", 0),
    "Kokkos::View::initialization [counts]": ("parallel_for", 1, "setup", 0),
    "Kokkos::View::initialization [small_a]": ("parallel_for", 1, "setup", 0),
    "Kokkos::View::initialization [small_b]": ("parallel_for", 1, "setup", 0),
    "init_xy": ("parallel_for", 1, "setup", user_devid),
    "init_counts": ("parallel_for", 1, "setup", user_devid),
    "Kokkos::ViewFill-1D": ("parallel_for", 1, "setup", user_devid),
    "local_update": ("parallel_for", 3, "solve/assemble/local", user_devid),
    "assemble_dot": ("parallel_reduce", 3, "solve/assemble", user_devid),
    "prefix_sum": ("parallel_scan", 1, "", user_devid),
    "13TripleFunctor": ("parallel_for", 1, "", user_devid),
    "Kokkos::View::initialization [x_copy]": ("parallel_for", 1, "", 0),
    "checksum": ("parallel_reduce", 1, "", user_devid),
    "Kokkos::View::initialization [DualView::modified_flags]": ("parallel_for", 1, "", 0),
    "Kokkos::View::initialization [dual]": ("parallel_for", 1, "", 0),
    "dual_fill": ("parallel_for", 1, "", user_devid),
    "dual_sum": ("parallel_reduce", 1, "", user_devid),
}
if K > 1:
    expected["Kokkos::Impl::host_space_deepcopy_double"] = ("parallel_for", 1, "", user_devid)

kernels = kc.events(trace, "kokkos.kernel", "X")
kc.expect_eq(Counter(k["name"] for k in kernels), Counter({n: v[1] for n, v in expected.items()}), "kernel calls by name")
for k in kernels:
    if k["name"] not in expected:
        continue
    kind, _, region, devid = expected[k["name"]]
    kc.expect_eq(k["args"]["kind"], kind, f"kind of {k['name']}")
    kc.expect_eq(k["args"]["region"], region, f"region of {k['name']}")
    kc.expect_eq(k["args"]["devid"], devid, f"devid of {k['name']}")
    kc.expect_eq(k["args"]["device"], "Serial" if devid == 0 else user_device, f"device of {k['name']}")
ids = [k["args"]["id"] for k in kernels]
kc.expect_eq(len(set(ids)), len(ids), "kernel ids are unique")
kc.expect_eq(Counter(k["args"]["kind"] for k in kernels)["parallel_for"], 17 if K > 1 else 16, "parallel_for count")

regions = kc.events(trace, "kokkos.region", "X")
kc.expect_eq(Counter(r["args"]["path"] for r in regions),
             Counter({"setup": 1, "solve": 3, "solve/assemble": 3, "solve/assemble/local": 3}), "region paths")
for r in regions:
    kc.expect_eq(r["args"]["path"].split("/")[-1], r["name"], "region path ends with its name")
# Every kernel launched in a region lies inside one region span of that path on its thread.
for k in kernels:
    if k["args"]["region"]:
        kc.check(any(r["args"]["path"] == k["args"]["region"] and r["tid"] == k["tid"] and kc.inside(k, r) for r in regions),
                 f"kernel {k['name']} lies inside a region {k['args']['region']}")
local = [k for k in kernels if k["name"] == "local_update"]
assemble = [k for k in kernels if k["name"] == "assemble_dot"]

sec_b = kc.events(trace, "kokkos.section", "b")
sec_e = kc.events(trace, "kokkos.section", "e")
kc.expect_eq(Counter(s["name"] for s in sec_b), Counter({"phase_A": 2, "phase_B": 1}), "section intervals (begin)")
kc.expect_eq(Counter(s["name"] for s in sec_e), Counter({"phase_A": 2, "phase_B": 1}), "section intervals (end)")
for s in sec_b + sec_e:
    kc.expect_eq(s["id"], s["args"]["section"], "section async id is the section id")
a_b = sorted(s["ts"] for s in sec_b if s["name"] == "phase_A")
a_e = sorted(s["ts"] for s in sec_e if s["name"] == "phase_A")
b_b = [s["ts"] for s in sec_b if s["name"] == "phase_B"]
b_e = [s["ts"] for s in sec_e if s["name"] == "phase_B"]
if len(a_b) == 2 and len(a_e) == 2 and b_b and b_e:
    kc.check(a_b[0] < b_b[0] < a_e[0] < b_e[0] < a_b[1] < a_e[1], "phase_A and phase_B overlap as the sample orders them")

kc.expect_eq(Counter(e["name"] for e in kc.events(trace, "kokkos.event", "i")), Counter({"iteration_done": 3, "done": 1}),
             "profile events")
fences = kc.events(trace, "kokkos.fence", "X")
kc.expect_eq(Counter(f["name"] for f in fences), Counter({"sample::solve_fence": 3}), "fences")
for f in fences:
    kc.expect_eq(f["args"]["devid"], user_devid, "fence devid")

copies = kc.events(trace, "kokkos.deep_copy", "X")
kc.expect_eq(Counter((c["name"], c["args"]["bytes"]) for c in copies),
             Counter({("small_a <- Scalar", 8000): 1, ("small_b <- small_a", 8000): 1, ("x_copy <- x", 131072): 1}),
             "deep copies by name and bytes")
for c in copies:
    kc.expect_eq((c["args"]["dst_space"], c["args"]["src_space"]), ("Host", "Host"), "deep copy spaces")
    kc.expect_eq(c["name"], f"{c['args']['dst_name']} <- {c['args']['src_name']}", "deep copy name")
fill = [k for k in kernels if k["name"] == "Kokkos::ViewFill-1D"]
small_a = [c for c in copies if c["name"] == "small_a <- Scalar"]
if fill and small_a:
    kc.check(kc.inside(fill[0], small_a[0]), "ViewFill-1D kernel nests inside its deep copy")

allocs = kc.events(trace, "kokkos.alloc", "i")
deallocs = kc.events(trace, "kokkos.dealloc", "i")
user_views = {"x": 131072, "y": 131072, "counts": 16384, "small_a": 8000, "small_b": 8000, "x_copy": 131072,
              "DualView::modified_flags": 8, "dual": 4096}
expected_allocs = Counter(user_views.items())
if a.backend == "serial":
    expected_allocs[("Kokkos::Serial::scratch_mem", 11264)] += 1
kc.expect_eq(Counter((e["name"], e["args"]["bytes"]) for e in allocs), expected_allocs, "allocations by name and bytes")
kc.expect_eq(Counter((e["name"], e["args"]["bytes"]) for e in deallocs), Counter(user_views.items()), "deallocations")
for e in allocs + deallocs:
    kc.expect_eq(e["args"]["space"], "Host", "allocation space")
alloc_ptrs = {(e["name"], e["args"]["ptr"]) for e in allocs}
for e in deallocs:
    kc.check((e["name"], e["args"]["ptr"]) in alloc_ptrs, f"deallocation of {e['name']} matches an allocation's pointer")
mem = kc.events(trace, "kokkos.memory", "C")
kc.expect_eq(len(mem), len(allocs) + len(deallocs), "one memory counter sample per (de)allocation")
peak = 429704 + (11264 if a.backend == "serial" else 0)
kc.expect_eq(max((m["args"]["bytes"] for m in mem), default=0), peak, "Host memory high-water in the counter")

duals = kc.events(trace, "kokkos.dual_view", "i")
kc.expect_eq(Counter((d["name"], d["args"]["op"], d["args"]["on_device"]) for d in duals),
             Counter({("dual", "modify", True): 1, ("dual", "sync", False): 1, ("dual", "modify", False): 1,
                      ("dual", "sync", True): 1}), "dual view sync/modify")

# The summary carries the same figures.
sk = {(k["name"], k["kind"]): k for k in summary["kernels"]}
kc.expect_eq(sk.get(("assemble_dot", "parallel_reduce"), {}).get("calls"), 3, "summary: assemble_dot calls")
kc.expect_eq(sk.get(("local_update", "parallel_for"), {}).get("calls"), 3, "summary: local_update calls")
la = sk.get(("local_update", "parallel_for"), {})
if la:
    durs = [round(k["dur"] * 1000) for k in local]
    kc.expect_eq(la["total_ns"], sum(durs), "summary: local_update total equals the trace's durations")
    kc.expect_eq((la["min_ns"], la["max_ns"]), (min(durs), max(durs)), "summary: local_update min/max")
sr = {r["path"]: r for r in summary["regions"]}
kc.expect_eq(sorted(sr), ["setup", "solve", "solve/assemble", "solve/assemble/local"], "summary: region tree")
if "solve" in sr and "solve/assemble" in sr:
    kc.expect_eq(sr["solve"]["exclusive_ns"], sr["solve"]["inclusive_ns"] - sr["solve/assemble"]["inclusive_ns"],
                 "summary: exclusive = inclusive minus child regions")
sm = {m["space"]: m for m in summary["memory"]}
kc.expect_eq(sm.get("Host", {}).get("high_water_bytes"), peak, "summary: Host high-water")
kc.expect_eq(sm.get("Host", {}).get("allocations"), len(expected_allocs), "summary: Host allocations")
sc = summary["deep_copies"]
kc.expect_eq([(c["dst_space"], c["src_space"], c["calls"], c["bytes"]) for c in sc], [("Host", "Host", 3, 147072)],
             "summary: deep copies per space pair")
kc.expect_eq(summary["dropped_events"], 0, "summary: dropped events")
kc.expect_eq((summary["dual_view_syncs"], summary["dual_view_modifies"], summary["profile_events"]), (2, 2, 4),
             "summary: dual views and profile events")
kc.expect_eq(summary["problems"], [], "no problems reported")

kc.finish()
