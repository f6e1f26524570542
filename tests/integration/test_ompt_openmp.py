"""A plain OpenMP program (no Kokkos) with OMP_TOOL_LIBRARIES alone: exact counts of every
construct the sample's header promises, for team size T."""
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

env = {"OMP_NUM_THREADS": str(T)}
base_rc, base_out, _ = kc.run([prog], env, unset=("OMP_TOOL_LIBRARIES",))
wd = kc.workdir()
prefix = os.path.join(wd, "out")
env.update({"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"})
rc, out, err = kc.run([prog], env, cwd=wd)
kc.expect_eq(rc, base_rc, "exit code with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
kc.expect_eq([l for l in err.splitlines() if "warning" in l], [], "no warnings")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
ev = trace["traceEvents"]
kc.expect_eq([e for e in ev if str(e.get("cat", "")).startswith("kokkos.")], [], "no Kokkos events")


def count(cat, ph="X"):
    return Counter(kc.construct(e) for e in kc.events(trace, cat, ph))


par = kc.events(trace, "omp.parallel", "X")
kc.expect_eq(len(par), 8, "parallel regions")
it = count("omp.implicit_task")
kc.expect_eq(it["implicit task"], 19 + T, "implicit tasks")
kc.expect_eq(it["initial task"], 1, "initial task")
sync = count("omp.sync")
kc.expect_eq(sync["barrier_implicit_parallel"], 18 + T if T > 1 else 18, "implicit parallel barriers")
kc.expect_eq(sync["barrier_explicit"], 8, "explicit barriers")
kc.expect_eq(sync["barrier_implicit_workshare"], 20, "workshare barriers")
kc.expect_eq(sync["taskwait"], 1, "taskwaits")
kc.expect_eq(sync["taskgroup"], 2, "taskgroups")
work = count("omp.work")
kc.expect_eq(work["loop_static"], 4 + T, "static loops")
kc.expect_eq(work["loop_dynamic"], 4, "dynamic loops")
kc.expect_eq(work["sections"], 4, "sections")
kc.expect_eq(work["single_executor"], 2, "single (executor)")
kc.expect_eq(work["single_other"], 6, "single (other)")
kc.expect_eq(work["taskloop"], 1, "taskloop")
kc.expect_eq(work["masked"], 1, "masked")

created = kc.events(trace, "omp.task_create", "i")
kc.expect_eq(len(created), 15, "explicit tasks created")
runs = kc.events(trace, "omp.task", "X")
completed = {r["args"]["task_id"] for r in runs if r["args"].get("status") == "complete"}
kc.expect_eq(completed, {c["args"]["task_id"] for c in created}, "tasks created = tasks completed")
deps = [e for e in kc.events(trace, "omp.dependence", "i") if e["name"] == "dependences"]
kc.expect_eq(sorted(e["args"]["count"] for e in deps), [1, 1, 3], "dependences per task")

mutex = kc.events(trace, "omp.mutex", "X")
holds = Counter(kc.construct(m) for m in mutex if m["args"]["phase"] == "hold" and not m["args"].get("nested"))
kc.expect_eq(holds["lock"], 12, "lock holds = lock calls")
kc.expect_eq(holds["critical"], 8, "critical holds")
kc.expect_eq(holds["nest_lock"], 4, "outer nest lock holds")
kc.expect_eq(sum(1 for m in mutex if m["args"].get("nested")), 4, "nested nest lock holds")
waits = Counter(kc.construct(m) for m in mutex if m["args"]["phase"] == "wait")
kc.expect_eq(waits["lock"], 12, "lock waits")
kc.expect_eq(waits["critical"], 8, "critical waits")
locks = Counter(kc.construct(e) for e in kc.events(trace, "omp.lock", "i"))
kc.expect_eq((locks["lock_init"], locks["lock_destroy"]), (2, 2), "lock init/destroy (lock + nest lock)")

# Task stretches are linked to their creation.
flows_s = {f["id"] for f in ev if f.get("ph") == "s" and f.get("cat") == "correlation"}
kc.check(len(flows_s) >= len(runs), "a flow per task stretch")

om = summary.get("openmp", {})
kc.expect_eq(om.get("parallel_regions"), 8, "summary: parallel regions")
kc.expect_eq(om.get("tasks", {}).get("created"), 15, "summary: tasks created")
kc.expect_eq(om.get("tasks", {}).get("completed"), 15, "summary: tasks completed")
kc.expect_eq(om.get("outside_kokkos", {}).get("parallel_regions"), 8, "summary: all regions outside Kokkos")
# libomp reports its own code address for the nested regions: they are still the program's
kc.expect_eq(om.get("hidden_helper_threads"), 0, "summary: no hidden-helper thread")
threads = om.get("threads", [])
kc.check(len(threads) >= T, f"summary: at least {T} OpenMP threads")
kc.check(all(th.get("proc", -1) >= 0 for th in threads), "summary: each thread's processor (ompt_get_proc_id)")
kc.finish()
