"""A Serial-backend Kokkos program whose kernels contain the user's own OpenMP: each user
parallel region names the Kokkos kernel it ran in, on both team threads."""
import argparse
import os
from collections import Counter, defaultdict

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--route", choices=["omp-tool-libraries", "ld-preload"], required=True)
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)

env = {"OMP_NUM_THREADS": "4"}
base_rc, base_out, _ = kc.run([prog], env, unset=("KOKKOS_PROFILE_LIBRARY", "OMP_TOOL_LIBRARIES", "LD_PRELOAD"))
wd = kc.workdir()
prefix = os.path.join(wd, "out")
env.update({"KOKKOS_PROFILE_LIBRARY": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"})
env["OMP_TOOL_LIBRARIES" if a.route == "omp-tool-libraries" else "LD_PRELOAD"] = lib
rc, out, err = kc.run([prog], env, cwd=wd)
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
kc.expect_eq([l for l in err.splitlines() if "warning" in l], [], "no warnings")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kernels = {k["args"]["id"]: k for k in kc.events(trace, "kokkos.kernel", "X")}
par = kc.events(trace, "omp.parallel", "X")
kc.expect_eq(len(par), 8, "parallel regions")
per_name = Counter(kernels[p["args"]["kokkos_kernel"]]["name"] if p["args"].get("kokkos_kernel") in kernels else ""
                   for p in par)
kc.expect_eq(per_name, Counter({"omp_inside_for": 6, "omp_inside_reduce": 1, "": 1}), "parallel regions per kernel")
for p in par:
    kk = p["args"].get("kokkos_kernel")
    if kk in kernels:
        kc.check(kc.inside(p, kernels[kk]) and p["tid"] == kernels[kk]["tid"], "region lies inside its kernel")
tasks = [t for t in kc.events(trace, "omp.implicit_task", "X") if t["name"] == "implicit task"]
kc.expect_eq(len(tasks), 16, "implicit tasks")
by_par = defaultdict(list)
for t in tasks:
    by_par[t["args"]["parallel_id"]].append(t)
for p in par:
    ts = by_par[p["args"]["parallel_id"]]
    kc.expect_eq(len({t["tid"] for t in ts}), 2, "two threads per region")
    for t in ts:
        kc.expect_eq(t["args"].get("kokkos_kernel"), p["args"].get("kokkos_kernel"), "worker's implicit task names the kernel")
loops = [w for w in kc.events(trace, "omp.work", "X") if kc.construct(w) == "loop_static"]
kc.expect_eq(len(loops), 16, "static loops")
kc.expect_eq(sum(1 for w in loops if w["args"].get("kokkos_kernel") in kernels), 14, "loops inside kernels name them")
kc.finish()
