"""Past --max-trace-size whole chunks of events are dropped: the raw trace stays under the cap, the
files hold exactly the events recorded before it, the summary names each lost stretch and marks
the rows that miss calls, and one stderr line counts the loss, also under --quiet. Kernels through
the hooks in Kokkos 4.x order: WORKER on a second thread first, then FLOOD on the main thread, far
more than the 2 MiB cap holds (the two threads' ring slots alone take 256 KiB of it).

The cap is sticky: once a chunk does not fit, no later chunk of any thread is written, so what the
file holds of each thread is the start of its run in whole chunks (511 records), or all of it
when the thread ended before the cap (its last, partial chunk is written when it ends: the worker
usually), and each thread's lost events are the rest. The figures expected are derived from the LOST stretches the
summary reports (how many chunks fit depends on how well the times compress): per thread,
recorded = events it made - events lost, a multiple of 511, and its kernels in the files are the
first recorded // 2 it ran (a kernel whose end was lost is discarded, and named as such). Both
summary engines make the same files of the capped run."""
import argparse
import json
import os
import re
from collections import defaultdict

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--driver", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
a = ap.parse_args()
driver, lib, kob = os.path.abspath(a.driver), os.path.abspath(a.lib), os.path.abspath(a.kob)
FLOOD, WORKER = 400000, 1500  # the worker: 5 whole chunks (511 events, an odd count) and part of a sixth
CHUNK = 511  # records per chunk (docs/raw-format.md: a ring slot holds 511 records)
CAP_MIB = 2
REASON = "--max-trace-size reached"


def run(tool_args):
    wd = kc.workdir()
    rc, out, err = kc.run([driver, lib, f"--kernels={FLOOD}", f"--worker-kernels={WORKER}", "--",
                           "--quiet", f"--output={wd}/d"] + tool_args, cwd=wd, unset=("KOB_ARGS", "KOKKOS_TOOLS_ARGS"))
    kc.expect_eq(rc, 0, f"{tool_args}: exit code")
    with open(f"{wd}/d.summary.json") as f:
        summary = kc.json_load(f)
    with open(f"{wd}/d.summary.txt") as f:
        text = f.read()
    return wd, out, err, summary, text




# Without the cap: complete, no mark, no drop line (only the summary formats: the full trace would
# be 80 MB of JSON).
_, base_out, err, summary, text = run(["--format=summary,json"])
kc.check(base_out.startswith(f"kernels {FLOOD + WORKER} "), f"the program ran to its end: {base_out!r}")
kc.expect_eq((summary["dropped_events"], summary["coverage"]["complete"], summary["coverage"]["lost"]), (0, True, []),
             "no cap: complete")
kc.expect_eq({k["name"]: (k["calls"], k["partial"]) for k in summary["kernels"]},
             {"flood_kernel": (FLOOD, False), "worker_kernel": (WORKER, False)}, "no cap: every call, no partial row")
kc.check("events lost" not in err and "INCOMPLETE" not in text and " *" not in text, "no cap: nothing marked")

# With the cap.
wd, out, err, summary, text = run([f"--max-trace-size={CAP_MIB}", kc.CHROME])
kc.expect_eq(out, base_out, "stdout as without the cap")
size = os.path.getsize(f"{wd}/d.kob")
kc.check(0 < size <= CAP_MIB << 20, f"the raw trace stays under the cap: {size} bytes")
trace = kc.json_load(open(f"{wd}/d.trace.json"))
kc.validate_trace(trace)

cov = summary["coverage"]
lost = cov["lost"]
dropped = summary["dropped_events"]
kc.check(len(lost) >= 1, f"the cap was reached: {cov}")
kc.expect_eq({l["reason"] for l in lost}, {REASON}, "every stretch was lost to the cap")
kc.expect_eq(sum(l["events"] for l in lost), dropped, "the stretches account for every dropped event")
kc.expect_eq((cov["complete"], cov["dropped_events"]), (False, dropped), "coverage: incomplete")

# Kernels in the trace, per thread (os tid) and name, with their ids.
kernels_by_tid = defaultdict(list)
for e in kc.events(trace, "kokkos.kernel", "X"):
    kernels_by_tid[e["tid"]].append(e)
names = {tid: {e["name"] for e in ks} for tid, ks in kernels_by_tid.items()}
tid_of = {next(iter(n)): tid for tid, n in names.items() if len(n) == 1}
kc.expect_eq(sorted(tid_of), ["flood_kernel", "worker_kernel"], f"each thread runs one kernel name: {names}")
made = {"worker_kernel": 2 * WORKER, "flood_kernel": 2 * FLOOD}
first_id = {"worker_kernel": 1, "flood_kernel": WORKER + 1}  # the tool numbers kernels in launch order
lost_by_tid = defaultdict(list)
for l in lost:
    lost_by_tid[l["os_tid"]].append(l)
threads_cov = {th["os_tid"]: th for th in cov["threads"]}
rows = {k["name"]: k for k in summary["kernels"]}
flushes_by_tid = {th["os_tid"]: th["flushes"] for th in summary["tool"]["threads"]}
ends_lost = 0
for name in ("worker_kernel", "flood_kernel"):
    tid = tid_of.get(name)
    ls = lost_by_tid.get(tid, [])
    lost_events = sum(l["events"] for l in ls)
    recorded = made[name] - lost_events
    # A chunk the thread copied itself (the writer had no core) opens with its flush record, which
    # is the tool's, not an event lost or made: the chunks that reached the file hold both.
    flushes = flushes_by_tid.get(tid, 0)
    kc.check((recorded + flushes) % CHUNK == 0 or recorded == made[name],
             f"{name}: whole chunks dropped, {recorded} events and {flushes} flush records recorded")
    calls = recorded // 2
    ends_lost += recorded % 2
    ks = kernels_by_tid.get(tid, [])
    kc.expect_eq(len(ks), calls, f"{name}: kernels in the trace = run - lost stretches")
    kc.expect_eq(sorted(e["args"]["id"] for e in ks), list(range(first_id[name], first_id[name] + calls)),
                 f"{name}: the trace holds the first kernels of the thread, none after its loss")
    kc.expect_eq((rows[name]["calls"], rows[name]["partial"]) if name in rows else "no row",
                 (calls, lost_events > 0), f"{name}: summary row (calls, partial)")
    if lost_events:
        kc.expect_eq(len(ls), 1, f"{name}: one stretch (the cap is sticky: the rest of the thread)")
        th = threads_cov.get(tid, {})
        kc.expect_eq(th.get("dropped_events"), lost_events, f"{name}: coverage.threads counts the thread's loss")
        last_end_ns = max((e["ts"] + e["dur"]) * 1000 for e in ks) if ks else 0
        kc.check(last_end_ns <= ls[0]["from_ns"] + 1 and th.get("recorded_until_ns", 0) <= ls[0]["from_ns"] <= ls[0]["to_ns"],
                 f"{name}: the stretch starts after the thread's last recorded event ({last_end_ns} ns): {ls[0]} {th}")
    else:
        kc.check(tid not in threads_cov, f"{name}: a thread that lost nothing is not in coverage.threads")
kc.check(lost_by_tid.get(tid_of.get("flood_kernel")), "the flood thread lost events")
kc.expect_eq(set(lost_by_tid) - set(tid_of.values()), set(), "stretches only on the kernels' threads")
kc.expect_eq(summary["problems"], [f"a Kokkos kernel without an end, discarded (events were dropped) ({ends_lost} time"
                                   f"{'s' if ends_lost > 1 else ''})"] if ends_lost else [],
             "kernels whose end was lost are discarded and named")
kc.expect_eq(cov["complete_until_ns"], min(l["from_ns"] for l in lost), "coverage: complete until the first stretch")
kc.check(cov["complete_until_ns"] < cov["run_end_ns"] == summary["run_time_ns"], f"coverage: before the end of the run: {cov}")

# stderr under --quiet: the summary is not printed; the cap is named once, the loss in one line.
lines = [l for l in err.splitlines() if "events lost" in l]
kc.expect_eq(len(lines), 1, f"one loss line on stderr under --quiet: {err!r}")
first = lost[0]
kc.check(lines and re.fullmatch(rf"kokkos-ompt-bridge: warning: {dropped} events lost in {len(lost)} stretches \(first: thread "
                                rf"{first['track']}, \S+ \S+ to \S+ \S+, {re.escape(REASON)}\); the summary lists them", lines[0]),
         f"the loss line names the count, the stretches and the first one: {lines}")
cap_lines = [l for l in err.splitlines() if "reached --max-trace-size" in l]
kc.expect_eq(cap_lines, [f"kokkos-ompt-bridge: warning: the raw trace {wd}/d.kob reached --max-trace-size={CAP_MIB} (MiB); "
                         "events are dropped from now on (counted)"], "one line names the cap when it is reached")
kc.check("Kokkos kernels" not in err, "--quiet: no summary on stderr")

# The text summary: the span covered, each stretch, * on the partial rows and its legend.
kc.check(f"INCOMPLETE: {dropped} events lost; the figures hold every event only until" in text, "text header: events lost")
kc.check("run time (first event to the end of the run)" in text, "text: the run time spans the whole run")
stretch_lines = re.findall(r"^  thread (\d+) \(os tid (\d+)\): (\d+) events lost from .+ to .+ \((.+)\)$", text, re.M)
kc.expect_eq(sorted(stretch_lines), sorted((str(l["track"]), str(l["os_tid"]), str(l["events"]), REASON) for l in lost),
             "text: one line per lost stretch")
for name in ("flood_kernel", "worker_kernel"):
    row = next((l for l in text.splitlines() if l.startswith("  " + name + " ")), "")
    kc.expect_eq(row.startswith(f"  {name} *"), bool(lost_by_tid.get(tid_of.get(name))), f"text: {name} row marked * iff partial: {row!r}")
kc.check("rows marked * miss events" in text, "text: the mark is explained")

# The raw trace holds the same: kob convert gives the library's summary.
conv = os.path.join(wd, "conv")
rc, _, cerr = kc.run([kob, "convert", f"{wd}/d.kob", f"--output={conv}", "--to=summary,json", "--quiet"])
kc.expect_eq(rc, 0, f"kob convert exit status ({cerr.strip()})")
if os.path.exists(conv + ".summary.json"):
    kc.expect_eq(kc.json_load(open(conv + ".summary.json")), summary, "kob convert's summary.json equals the library's")

# The per-thread engine (issue 42) covers the capped run (each thread's records end at the cap: a
# kernel whose end was lost, when the cap fell between its begin and end, discarded; the lost
# stretches on the time line) and makes the builder's files, byte for byte.
made = {}
for engine in ("builder", "per-thread"):
    prefix = os.path.join(wd, "engine-" + engine)
    rc, _, eerr = kc.run([kob, "convert", f"{wd}/d.kob", f"--output={prefix}", "--to=summary,json", "--quiet"], {"KOB_ENGINE": engine})
    kc.expect_eq(rc, 0, f"kob convert ({engine}) exit status ({eerr.strip()[-300:]})")
    if engine == "per-thread":
        kc.expect_eq([l for l in eerr.splitlines() if "the per-thread engine declined" in l], [], "the per-thread engine covered the capped run")
    made[engine] = [open(prefix + ext, "rb").read() for ext in (".summary.json", ".summary.txt")]
kc.check(made["per-thread"] == made["builder"], "the per-thread engine's summary.json and summary.txt are the builder's")
kc.finish()
