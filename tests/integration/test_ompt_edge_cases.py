"""OpenMP sequences that are legal but unusual (samples/openmp_edge_cases.cpp), one case per run,
with OMP_TOOL_LIBRARIES on LLVM's runtime: exact counts, no warning from the tool, valid files,
spans whose extent follows the program's structure."""
import argparse
import os
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--case", required=True)
a = ap.parse_args()
prog, lib, case = os.path.abspath(a.program), os.path.abspath(a.lib), a.case

env = {"OMP_NUM_THREADS": "2", "OMP_CANCELLATION": "true", "KMP_WARNINGS": "0"}
base_rc, base_out, _ = kc.run([prog, case], env, unset=("OMP_TOOL_LIBRARIES",))
wd = kc.workdir()
prefix = os.path.join(wd, "out")
env.update({"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"})
rc, out, err = kc.run([prog, case], env, cwd=wd)
kc.expect_eq(rc, base_rc, "exit status with the tool")
kc.expect_eq(out, base_out, "stdout with the tool")
ours = [l for l in err.splitlines() if l.startswith("kokkos-ompt-bridge:") and not l.startswith("kokkos-ompt-bridge: wrote")]
kc.expect_eq(ours, [], "nothing from the tool on stderr but the files written (no warning)")

if case == "error_fatal":
    # libomp ends the program with abort() right after the callback: the exit status stays the
    # program's, and the tool writes its files from the callback itself.
    kc.expect_eq(base_rc, -6, "severity(fatal) aborts the program (SIGABRT)")
    trace, summary = kc.load_outputs(prefix)
    kc.validate_trace(trace)
    fatal = kc.events(trace, "omp.error", "i")
    kc.expect_eq([(e["args"]["severity"], e["args"]["message"]) for e in fatal], [("fatal", "edge case: fatal error directive")],
                 "the fatal error instant")
    kc.expect_eq(summary["openmp"].get("errors"), {"warning": 0, "fatal": 1}, "summary: one fatal error directive")
    kc.finish()

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kc.expect_eq(summary.get("problems"), [], "no problem noted in the summary")
ev = trace["traceEvents"]
om = summary["openmp"]
tasks = om["tasks"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
if case != "target_nowait":
    kc.expect_eq(om.get("hidden_helper_threads"), 0, "no hidden-helper team without target nowait")


def end(e):
    return e["ts"] + e["dur"]


def on(tid_name, cat, name=None, ph="X"):
    return [e for e in kc.events(trace, cat, ph) if names.get(e["tid"]) == tid_name and (name is None or kc.construct(e) == name)]


def task_runs():
    return kc.events(trace, "omp.task", "X")


if case == "lock_across":
    holds = [m for m in kc.events(trace, "omp.mutex", "X") if m["args"]["phase"] == "hold"]
    outer = [m for m in holds if not m["args"].get("nested")]
    kc.expect_eq(sorted(kc.construct(m) for m in outer), ["lock", "nest_lock"], "one lock hold and one nest lock hold")
    kc.expect_eq(sum(1 for m in holds if m["args"].get("nested")), 1, "one nested nest lock hold (the test inside)")
    masked = sorted(on("omp thread 0", "omp.work", "masked"), key=lambda e: e["ts"])
    barrier = on("omp thread 0", "omp.sync", "barrier_explicit")
    kc.expect_eq((len(masked), len(barrier)), (2, 1), "thread 0: two masked blocks and one explicit barrier")
    for m in outer:
        kc.expect_eq(names.get(m["tid"]), "omp thread 0 mutex holds", f"the {m['name']} hold is on thread 0's hold lane")
        if len(masked) == 2 and barrier:
            kc.check(kc.inside(barrier[0], m), f"the {m['name']} hold spans the barrier between set and unset")
            kc.check(masked[0]["ts"] <= m["ts"] <= end(masked[0]), f"the {m['name']} hold starts in the first masked block")
            kc.check(masked[1]["ts"] <= end(m) <= end(masked[1]), f"the {m['name']} hold ends in the second masked block")
        # the summary and the trace give the hold one duration (ns vs us with ns decimals)
        kc.check(abs(om["mutex"][kc.construct(m)]["hold_ns"] / 1000.0 - m["dur"]) < 0.0015,
                 f"{m['name']}: summary hold_ns {om['mutex'][kc.construct(m)]['hold_ns']} = trace dur {m['dur']}")
    kc.expect_eq((om["mutex"]["lock"]["holds"], om["mutex"]["nest_lock"]["holds"]), (1, 1), "summary: holds")

elif case == "test_lock":
    mutex = kc.events(trace, "omp.mutex", "X")
    failed = [m for m in mutex if m["args"].get("acquired") is False]
    kc.expect_eq(sorted(kc.construct(m) for m in failed), ["lock", "nest_lock"], "one failed try per lock kind")
    kc.check(all(m["args"]["phase"] == "wait" and m["dur"] == 0 for m in failed), "a failed try is a wait (a point), no hold")
    holds = Counter(kc.construct(m) for m in mutex if m["args"]["phase"] == "hold")
    kc.expect_eq((holds["lock"], holds["nest_lock"]), (2, 2), "holds: thread 1's set and thread 0's successful test")
    kc.expect_eq((om["mutex"]["lock"]["failed_tries"], om["mutex"]["nest_lock"]["failed_tries"]), (1, 1), "summary: failed tries")
    kc.expect_eq((om["mutex"]["lock"]["holds"], om["mutex"]["nest_lock"]["holds"]), (2, 2), "summary: holds")

elif case == "detach_early":
    runs = task_runs()
    fulfil = kc.events(trace, "omp.task_fulfill", "i")
    kc.expect_eq([r["args"]["status"] for r in runs], ["complete"], "one stretch, ended by the body's end")
    kc.expect_eq([kc.construct(f) for f in fulfil], ["early_fulfill"], "one early fulfill")
    if runs and fulfil:
        kc.expect_eq(fulfil[0]["args"]["task_id"], runs[0]["args"]["task_id"], "the fulfill names the task")
        kc.check(runs[0]["ts"] <= fulfil[0]["ts"] < end(runs[0]), "the body runs on after the fulfill (the stretch contains it)")
    kc.expect_eq((tasks["created"], tasks["stretches"], tasks["completed"]), (1, 1, 1), "summary: created, stretches, completed")

elif case == "detach_late":
    runs = task_runs()
    fulfil = kc.events(trace, "omp.task_fulfill", "i")
    kc.expect_eq([r["args"]["status"] for r in runs], ["detach"], "one stretch, ended as detached")
    kc.expect_eq([kc.construct(f) for f in fulfil], ["late_fulfill"], "one late fulfill")
    if runs and fulfil:
        kc.expect_eq(fulfil[0]["args"]["task_id"], runs[0]["args"]["task_id"], "the fulfill names the task")
        kc.check(fulfil[0]["ts"] >= end(runs[0]), "the fulfill comes after the body")
    kc.expect_eq((tasks["created"], tasks["stretches"], tasks["completed"]), (1, 1, 1), "summary: created, stretches, completed")

elif case == "taskwait_depend":
    runs = task_runs()
    waits = [r for r in runs if r["args"]["flags"] & 0x10]
    real = [r for r in runs if not r["args"]["flags"] & 0x10]
    kc.expect_eq([r["args"]["status"] for r in waits], ["taskwait_complete"] * 2,
                 "taskwait depend and task if(0) depend: a taskwait task each, ended by taskwait_complete")
    kc.expect_eq([r["args"]["status"] for r in real], ["complete"] * 2, "the two real tasks complete")
    kc.expect_eq((tasks["created"], tasks["stretches"], tasks["completed"]), (4, 2, 4), "summary: created, stretches, completed")

elif case == "cancel_taskgroup":
    runs = task_runs()
    kc.expect_eq([r["args"]["status"] for r in runs], ["cancel"], "only the cancelling task runs; it ends cancelled")
    kc.expect_eq(len(kc.events(trace, "omp.task_create", "i")), 7, "tasks created")
    kc.expect_eq(len(kc.events(trace, "omp.cancel", "i")), 7, "cancel events: the construct and 6 discarded tasks")
    kc.expect_eq((tasks["created"], tasks["completed"], tasks["cancelled"], tasks["discarded"]), (7, 0, 7, 6),
                 "summary: created, completed, cancelled, discarded")

elif case == "untied":
    runs = task_runs()
    kc.check(runs and all(r["args"]["flags"] & 0x10000000 for r in runs), "every stretch is of an untied task")
    ended = Counter(r["args"]["status"] for r in runs)
    kc.expect_eq(ended["complete"], 4, "each untied task completes once")
    kc.expect_eq((tasks["created"], tasks["completed"]), (4, 4), "summary: created, completed")

elif case == "error_warning":
    errors = kc.events(trace, "omp.error", "i")
    kc.expect_eq(sorted((e["args"]["severity"], e["args"]["message"]) for e in errors),
                 [("warning", "edge case: a warning from the error directive"), ("warning", "edge case: from a masked block")],
                 "two error instants with severity and message")
    kc.expect_eq(om.get("errors"), {"warning": 2, "fatal": 0}, "summary: error directives")
    kc.expect_eq(trace["otherData"]["ompt_callbacks"].get("error"), "always", "the error callback is registered")

elif case == "target_nowait":
    helpers = sorted(n for n in names.values() if n.startswith("hidden helper "))
    team = [p for p in kc.events(trace, "omp.parallel", "X") if names.get(p["tid"], "").startswith("hidden helper ")]
    kc.expect_eq(len(team), 1, "the hidden-helper team's one parallel region, on its own tracks")
    kc.expect_eq(len(helpers), 8, "8 hidden-helper threads (libomp's default)")
    kc.expect_eq(helpers, sorted(f"hidden helper {i}" for i in range(len(helpers))), "hidden helpers numbered by thread")
    if team:
        kc.expect_eq(team[0]["args"]["team_size"], len(helpers), "one track per thread of the team")
    runs = task_runs()
    kc.expect_eq(len(runs), 1, "the target task runs once")
    kc.check(all(names.get(r["tid"], "").startswith("hidden helper ") for r in runs), "on a hidden-helper thread")
    targets = kc.events(trace, "omp.target", "X")
    kc.expect_eq([kc.construct(t) for t in targets], ["target"], "one target region")
    kc.check(all(names.get(t["tid"], "").startswith("hidden helper ") for t in targets), "run by the hidden-helper team")
    kc.expect_eq(om["parallel_regions"], 0, "summary: the program opened no parallel region")
    kc.expect_eq(om["hidden_helper_threads"], len(helpers), "summary: the hidden-helper threads")
    kc.expect_eq(om["sync"], {"taskwait": 1}, "summary: the program's taskwait only (the team's barriers are its own)")
    kc.expect_eq((tasks["created"], tasks["completed"]), (1, 1), "summary: the target task")

else:
    kc.check(False, f"unknown case {case}")
kc.finish()
