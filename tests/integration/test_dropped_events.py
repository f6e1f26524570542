"""Past --memory-limit the summary says which part of the run its figures cover, marks the rows
that may miss calls, and names the drop count on stderr also under --quiet. Kernels through the
hooks in Kokkos 4.x order: 10 on a worker thread first (never dropped), then 20000 on the main
thread, far more than 1 MiB of 64-byte records."""
import argparse
import json
import os
import re

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--driver", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
driver, lib = os.path.abspath(a.driver), os.path.abspath(a.lib)
FLOOD, WORKER = 20000, 10


def run(limit_args):
    wd = kc.workdir()
    rc, out, err = kc.run([driver, lib, f"--kernels={FLOOD}", f"--worker-kernels={WORKER}", "--",
                           "--quiet", f"--output={wd}/d"] + limit_args, cwd=wd, unset=("KOB_ARGS", "KOKKOS_TOOLS_ARGS"))
    kc.expect_eq(rc, 0, f"{limit_args}: exit code")
    kc.check(out.startswith(f"kernels {FLOOD + WORKER} "), f"{limit_args}: the program ran to its end: {out!r}")
    with open(f"{wd}/d.summary.json") as f:
        summary = json.load(f)
    with open(f"{wd}/d.summary.txt") as f:
        text = f.read()
    return err, summary, text


# 1 MiB: the worker's chunk and the main thread's first chunks fill it; the rest is dropped.
err, summary, text = run(["--memory-limit=1"])
dropped = summary["dropped_events"]
kernels = {k["name"]: k for k in summary["kernels"]}
flood = kernels.get("flood_kernel", {"calls": 0, "partial": None})
kc.check(0 < flood["calls"] < FLOOD, f"some flood kernels recorded, not all: {flood['calls']}")
kc.expect_eq(2 * flood["calls"] + dropped, 2 * FLOOD, "each flood kernel is recorded (begin + end) or dropped")
kc.expect_eq(flood["partial"], True, "the row of the thread that dropped events is marked partial")
kc.expect_eq((kernels["worker_kernel"]["calls"], kernels["worker_kernel"]["partial"]), (WORKER, False),
             "the worker thread kept every event: complete row")
cov = summary["coverage"]
kc.expect_eq((cov["complete"], cov["dropped_events"], len(cov["threads"])), (False, dropped, 1), "coverage: one thread dropped")
th = cov["threads"][0]
kc.expect_eq(th["dropped_events"], dropped, "coverage: that thread's drops")
kc.check(0 < cov["complete_until_ns"] == th["recorded_until_ns"] < cov["run_end_ns"] == summary["run_time_ns"],
         f"coverage: complete until the thread's last event, before the end of the run: {cov}")

# stderr under --quiet: the summary is not printed, the drop count is, in one line.
lines = [l for l in err.splitlines() if "events dropped" in l]
kc.expect_eq(len(lines), 1, f"one drop line on stderr under --quiet: {err!r}")
kc.check(lines and re.fullmatch(rf"kokkos-ompt-bridge: warning: {dropped} events dropped past --memory-limit=1 \(MiB\); "
                                r"the figures hold every event only until .+ of the .+ run \(raise --memory-limit\)", lines[0]),
         f"the drop line names the count, the cap and the span covered: {lines}")
kc.check("Kokkos kernels" not in err, "--quiet: no summary on stderr")

# The text summary: the span covered in the header, * on the partial row, its legend.
kc.check(f"INCOMPLETE: {dropped} events dropped" in text, "text header says events were dropped")
kc.check("run time (first event to the end of the run)" in text, "text: the run time spans the whole run")
kc.check(re.search(r"recorded until .+, then " + str(dropped) + " events dropped", text) is not None, "text: per-thread cut")
rows = {l.split()[0]: l for l in text.splitlines() if l.startswith("  flood_kernel") or l.startswith("  worker_kernel")}
kc.check(rows.get("flood_kernel", "").startswith("  flood_kernel *"), f"partial row marked *: {rows}")
kc.check("*" not in rows.get("worker_kernel", "*"), f"complete row unmarked: {rows}")
kc.check("rows marked * " in text, "text: the mark is explained")

# Without the cap: complete, no mark, no drop line.
err, summary, text = run([])
kc.expect_eq((summary["dropped_events"], summary["coverage"]["complete"]), (0, True), "no cap: complete")
kc.expect_eq({k["name"]: (k["calls"], k["partial"]) for k in summary["kernels"]},
             {"flood_kernel": (FLOOD, False), "worker_kernel": (WORKER, False)}, "no cap: every call, no partial row")
kc.check("events dropped" not in err and "INCOMPLETE" not in text and " *" not in text, "no cap: nothing marked")
kc.finish()
