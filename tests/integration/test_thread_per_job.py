"""Short-lived threads give their ring slots back: a program starts 400 std::threads one after
another (more than the 128 that the default --memory-limit=64 gives rings to at once), each
running one OpenMP parallel region of 2 threads. Every job's region and implicit tasks are in the
trace, nothing is dropped, the trace is well formed (what libomp reports for a job thread after
the thread's end hook, its initial task's end and thread_end, lands on that thread's own track),
and the program's output and exit code are unchanged. Without the hand-back, the threads after
the 128th record nothing (their events counted as dropped)."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)
JOBS = 400
ENV = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"}

rc0, out0, _ = kc.run([prog, str(JOBS)], ENV, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOB_ARGS"))
kc.expect_eq(rc0, 0, "exit code without the tool")
wd = kc.workdir()
prefix = os.path.join(wd, "jobs")
rc, out, err = kc.run([prog, str(JOBS)], {**ENV, "OMP_TOOL_LIBRARIES": lib,
                                           "KOB_ARGS": f"{kc.CHROME} --output={prefix}"}, cwd=wd)
kc.expect_eq(rc, 0, f"exit code with the tool ({err.strip()[-2000:]})")
kc.expect_eq(out, out0, "stdout unchanged by the tool")
kc.check("records nothing" not in err, f"no thread went without slots: {err.strip()[-2000:]}")
trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kc.expect_eq(trace["otherData"].get("dropped_events"), 0, "dropped events")
regions = kc.events(trace, "omp.parallel", "X")
kc.expect_eq(len(regions), JOBS, "parallel regions in the trace")
tasks = [e for e in kc.events(trace, "omp.implicit_task", "X") if e["args"].get("team_size") == 2]
kc.expect_eq(len(tasks), 2 * JOBS, "implicit tasks of the jobs' 2-thread teams")
# Each job's region is on a thread of its own (a new std::thread each time).
kc.expect_eq(len({e["tid"] for e in regions}), JOBS, "tracks holding a job's region")
kc.finish()
