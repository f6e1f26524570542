"""kob merge on 4 MPI ranks of a Kokkos + OpenMP program (OpenMPI's mpirun on loopback): rank 2's
whole time line is moved by a known offset (KOB_TEST_CLOCK_SHIFT_NS, a test-only variable), and the
merge must take it out again.

Checked, for the ranks run with the library alone (aligned by each run's wall-clock reference)
and, when the MPI layer libkob_mpi_openmpi.so is beside kob, for `kob run --mpi` (ping-pong offsets):
- the program's exit status and output are the same as without the tool;
- OUT.pftrace (decoded independently) has a process per rank, named by rank and host, holding
  exactly the slices of that rank's own .pftrace, each moved by the offset the merge reports
  (to the nanosecond), the offsets of ranks 0, 1, 3 within 5 us of 0 and rank 2's within 5 us of
  the injected shift;
- OUT.otf2 (read with otf2-print) has a process location group per rank with exactly the events
  of that rank's Chrome trace;
- OUT.summary.json lists the 4 runs by rank with how each was aligned, and per kernel the calls
  and min / mean / max over the ranks ("scaled" runs (r + 1) times per step on rank r);
- `kob report` of the 4 ranks has a row per rank with the merge's alignment and offsets, and every
  kernel span at the merged trace's time (one shift for the whole time line, to the nanosecond)."""
import argparse
import json
import os
import re
import socket
import sqlite3
import stat
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402
import mpi_launch  # noqa: E402
import otf2_read  # noqa: E402
import pftrace_decode as pd  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
mpi_launch.add_family_argument(ap)
a = ap.parse_args()
lib, kob, prog = os.path.abspath(a.lib), os.path.abspath(a.kob), os.path.abspath(a.program)
NP, SHIFTED, SHIFT_NS, TOLERANCE_NS = 4, 2, 5_000_000, 5_000
TIMEOUT = 240
EXE = os.path.basename(a.program)
RANK_VAR = mpi_launch.RANK_VARIABLE[a.family]
STEPS = 3
host = socket.gethostname()

mpirun = mpi_launch.mpirun_for(a.family)
if mpirun is None:
    kc.check(False, "mpirun is installed (openmpi-bin; scripts/setup.sh installs it)")
    kc.finish()
layer = os.path.join(os.path.dirname(kob), f"libkob_mpi_{a.family}.so")


def mpirun_run(env_extra, cwd, wrapper=()):
    return mpi_launch.run(mpirun, [(NP, env_extra, list(wrapper) + [prog])], cwd, TIMEOUT)


def shift_wrapper(wd):
    """A script that moves rank SHIFTED's clock and runs the rest of its command line."""
    path = os.path.join(wd, "shift_rank.sh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nif [ "${RANK_VAR}" = "{SHIFTED}" ]; then export KOB_TEST_CLOCK_SHIFT_NS={SHIFT_NS}; fi\n'
                'exec "$@"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def process_of(tr, uuid):
    t = tr.tracks.get(uuid)
    while t is not None:
        if t["thread"]:
            return t["thread"]["pid"]
        if t["process"]:
            return t["process"]["pid"]
        t = tr.tracks.get(t["parent"])
    return None


def by_rank_slices(tr):
    """pid -> sorted [(cat, name, ts, dur)] of the trace's slices."""
    sl, problems = pd.slices(tr)
    kc.expect_eq(problems, [], "slices pair up")
    out = {}
    for s in sl:
        out.setdefault(process_of(tr, s["track"]), []).append((s["cat"], s["name"], s["ts"], s["dur"]))
    return {k: sorted(v) for k, v in out.items()}


def report_data(path):
    """The data of a report page (the JSON element html_report.cpp writes)."""
    with open(path) as f:
        page = f.read()
    m = re.search(r'<script type="application/json" id="kob-data">(.*?)</script>', page, re.S)
    return kc.json_loads(m.group(1)) if m else None


def check_report(label, wd, prefixes, runs, merged_slices, procs):
    """kob report of the 4 ranks: a row per rank on rank 0's clock, each aligned as the merge says,
    and every kernel span where the merged trace has it, up to one shift of the whole time line."""
    page = os.path.join(wd, "job.html")
    rc, _, err = kc.run([kob, "report"] + prefixes[::-1] + ["-o", page, "--quiet"])
    kc.expect_eq(rc, 0, f"{label}: kob report of the ranks ({err.strip()[-300:]})")
    data = report_data(page)
    if not kc.check(data is not None and len(data.get("runs", [])) == NP, f"{label}: the report holds {NP} runs"):
        return
    got = [(r.get("clock") or {}) for r in data["runs"]]
    kc.expect_eq([(c.get("alignment"), c.get("offset_start_ns"), c.get("offset_end_ns")) for c in got],
                 [(r["alignment"], r["offset_start_ns"], r["offset_end_ns"]) for r in runs],
                 f"{label}: the report's clock per rank (alignment, offsets) = the merge's")
    kc.expect_eq(data["runs"][0].get("start_ns"), 0, f"{label}: rank 0's run starts the report's axis")
    shifts = set()
    for r, run in enumerate(data["runs"]):
        sp, names, cats = run["spans"], run["names"], run["cats"]
        mine = sorted((run["start_ns"] + sp[i + 3], names[sp[i + 2]], sp[i + 4]) for i in range(0, len(sp), 5)
                      if cats[sp[i + 1]] == "kokkos.kernel")
        pid = next((p for p, n in procs.items() if n.startswith(f"{EXE} rank {r} ")), None)
        theirs = sorted((ts, n, d) for c, n, ts, d in merged_slices.get(pid, []) if c == "kokkos.kernel")
        if not kc.expect_eq([(n, d) for _, n, d in mine], [(n, d) for _, n, d in theirs],
                            f"{label}: rank {r}'s kernels in the report = in the merged trace (names, durations)"):
            continue
        shifts |= {t1 - t0 for (t0, _, _), (t1, _, _) in zip(mine, theirs)}
    kc.expect_eq(len(shifts), 1, f"{label}: every rank's kernels sit where the merged trace has them, up to one shift: {sorted(shifts)[:5]}")


base_rc, base_out, base_err = mpirun_run({}, kc.workdir())
kc.expect_eq(base_rc, 0, f"the program runs under mpirun without the tool ({base_err[-300:]!r})")
kc.check(base_out.startswith(f"ranks {NP} total "), f"the program's output without the tool: {base_out!r}")


def check_merge(label, wd, expect_alignment):
    prefixes = [os.path.join(wd, f"r-{r}") for r in range(NP)]
    for p in prefixes:
        kc.check(os.path.isfile(p + ".kob"), f"{label}: {os.path.basename(p)}.kob written")
    out = os.path.join(wd, "merged")
    # Given out of order: the merge orders by rank.
    rc, _, err = kc.run([kob, "merge"] + prefixes[::-1] + ["-o", out])
    kc.expect_eq(rc, 0, f"{label}: kob merge exit status ({err.strip()[-400:]})")
    warned = "aligned by each run's wall-clock reading" in err
    kc.expect_eq(warned, expect_alignment == "wall clock", f"{label}: the warning about the alignment, only without the MPI layer")
    for ext in (".pftrace", ".otf2/traces.otf2", ".sqlite", ".summary.txt", ".summary.json"):
        kc.check(os.path.isfile(out + ext), f"{label}: merged{ext} written")
    # Summaries alone: each rank's by the per-thread engine (where it covers the run), the same
    # files as the timeline builder's.
    alone = {}
    for engine in ("builder", "per-thread"):
        rc, _, err = kc.run([kob, "merge"] + prefixes + ["-o", out + "-" + engine, "--to=summary,json", "--quiet"], {"KOB_ENGINE": engine})
        kc.expect_eq(rc, 0, f"{label}: kob merge --to=summary,json with KOB_ENGINE={engine} ({err.strip()[-300:]})")
        if engine == "per-thread":
            kc.expect_eq([l for l in err.splitlines() if "the per-thread engine declined" in l], [],
                         f"{label}: the per-thread engine covered every rank")
        alone[engine] = [open(out + "-" + engine + ext, "rb").read() for ext in (".summary.json", ".summary.txt")]
    kc.check(alone["per-thread"] == alone["builder"], f"{label}: kob merge's summaries alone: the per-thread engine's = the builder's")
    with open(out + ".summary.json") as f:
        ms = kc.json_load(f)
    runs = ms["runs"]
    kc.expect_eq([r["rank"] for r in runs], list(range(NP)), f"{label}: the runs by rank")
    kc.expect_eq([r["alignment"] for r in runs], ["reference"] + [expect_alignment] * (NP - 1), f"{label}: how each was aligned")
    # What the tool cost each rank's threads (their own flushes of full slots): as its own summary says.
    for r, run in enumerate(runs):
        with open(prefixes[r] + ".summary.json") as f:
            own = kc.json_load(f)["tool"]
        kc.expect_eq(run["tool"], {"flushes": own["flushes"], "flush_ns": own["flush_ns"]},
                     f"{label}: rank {r}'s tool flushes in the merged summary")
    offsets = {r["rank"]: (r["offset_start_ns"], r["offset_end_ns"]) for r in runs}
    for r, (o_start, o_end) in offsets.items():
        want = SHIFT_NS if r == SHIFTED else 0
        # The MPI layer's ping-pong is off by at most half its round trip (4 ranks on 2 cores: up to
        # ~100 us); the wall clocks of one host agree far better than 5 us.
        rtt = {}
        if expect_alignment == "mpi" and r != 0:
            with open(prefixes[r] + ".summary.json") as f:
                mpi = kc.json_load(f)["otherData"]["mpi"]
            rtt = {"start": mpi["clock_start"]["rtt_ns"], "end": mpi["clock_end"]["rtt_ns"]}
        for which, o in (("start", o_start), ("end", o_end)):
            bound = max(TOLERANCE_NS, rtt.get(which, 0) // 2 + 1)
            kc.check(abs(o - want) <= bound, f"{label}: rank {r}'s clock offset at {which} {o} ns is {want} ns within {bound} ns")
    mpi_calls = {c["name"]: c for c in ms.get("mpi_calls", [])}
    if expect_alignment == "mpi":
        kc.check(all(r["rtt_ns"] > 0 for r in runs[1:]), f"{label}: each rank's ping-pong round trip is known")
        for call in ("MPI_Allreduce", "MPI_Barrier"):
            c = mpi_calls.get(call, {})
            kc.expect_eq((c.get("ranks"), c.get("calls_min"), c.get("calls_max")), (NP, STEPS, STEPS),
                         f"{label}: {call} spans across ranks")
    else:
        kc.expect_eq(mpi_calls, {}, f"{label}: no MPI spans without the layer")
    kernels = {k["name"]: k for k in ms["kernels"]}
    if kc.check("scaled" in kernels and "fill" in kernels, f"{label}: kernels across ranks: {sorted(kernels)}"):
        kc.expect_eq((kernels["scaled"]["ranks"], kernels["scaled"]["calls_min"], kernels["scaled"]["calls_max"]),
                     (NP, STEPS, STEPS * NP), f"{label}: 'scaled' on every rank, {STEPS} to {STEPS * NP} calls")
        kc.expect_eq((kernels["fill"]["calls_min"], kernels["fill"]["calls_max"]), (STEPS, STEPS), f"{label}: 'fill' calls")
        k = kernels["scaled"]
        kc.check(k["min_us"] <= k["mean_us"] <= k["max_us"] and 0 <= k["imbalance"] < 1, f"{label}: min <= mean <= max: {k}")
    with open(out + ".summary.txt") as f:
        text = f.read()
    kc.check("Kokkos kernels across ranks" in text and "imbalance" in text, f"{label}: the merged text summary")
    # The merged database: a runs row per rank, a rank column in every table, the kernels per
    # rank as the merged summary counts them, keys that hold, times on rank 0's clock.
    db = sqlite3.connect(out + ".sqlite")
    kc.expect_eq([r[0] for r in db.execute("SELECT rank FROM runs ORDER BY rank")], list(range(NP)), f"{label}: merged.sqlite: a run per rank")
    kc.expect_eq(db.execute("PRAGMA foreign_key_check").fetchall(), [], f"{label}: merged.sqlite: keys hold")
    kc.expect_eq([r[0] for r in db.execute("SELECT alignment FROM runs ORDER BY rank")], [r["alignment"] for r in runs],
                 f"{label}: merged.sqlite: how each run was aligned, as the merged summary says")
    per_rank = dict(db.execute("SELECT rank, count(*) FROM kernels WHERE name = 'fill' GROUP BY rank").fetchall())
    kc.expect_eq(per_rank, {r: STEPS for r in range(NP)}, f"{label}: merged.sqlite: 'fill' {STEPS} times on each rank")
    calls = [n for (n,) in db.execute("SELECT count(*) FROM kernels WHERE name = 'scaled' GROUP BY rank ORDER BY rank")]
    if "scaled" in kernels:
        kc.expect_eq((min(calls), max(calls), len(calls)) if calls else None,
                     (kernels["scaled"]["calls_min"], kernels["scaled"]["calls_max"], NP), f"{label}: merged.sqlite: 'scaled' per rank")
    if expect_alignment == "mpi":
        per_rank = dict(db.execute("SELECT rank, count(*) FROM mpi_calls WHERE call = 'MPI_Barrier' GROUP BY rank").fetchall())
        kc.expect_eq(per_rank, {r: STEPS for r in range(NP)}, f"{label}: merged.sqlite: MPI_Barrier on each rank")
        # A barrier ends at about the same moment on every rank once the clocks are aligned.
        ends = [dict(db.execute("SELECT rank, max(end_ns) FROM mpi_calls WHERE call = 'MPI_Barrier' GROUP BY rank").fetchall())[r]
                for r in range(NP)]
        kc.check(max(ends) - min(ends) < 50_000_000, f"{label}: merged.sqlite: the last barrier ends within 50 ms on all ranks: {ends}")
    db.close()

    # Perfetto: a process per rank with exactly its own slices, moved by its offset.
    merged = kc.check_pftrace_rules(out + ".pftrace")
    procs = {t["process"]["pid"]: t["process"]["name"] for t in merged.tracks.values() if t["process"]}
    kc.expect_eq(sorted(procs.values()), sorted(f"{EXE} rank {r} on {host}" for r in range(NP)),
                 f"{label}: a process per rank, named by rank and host")
    merged_slices = by_rank_slices(merged)
    for r in range(NP):
        own = kc.check_pftrace_rules(prefixes[r] + ".pftrace")
        own_slices = by_rank_slices(own)
        kc.expect_eq(len(own_slices), 1, f"{label}: rank {r}'s own trace is one process")
        own_list = next(iter(own_slices.values()), [])
        pid = next((p for p, n in procs.items() if n.startswith(f"{EXE} rank {r} ")), None)
        got = merged_slices.get(pid, [])
        kc.expect_eq(Counter((c, n) for c, n, _, _ in got), Counter((c, n) for c, n, _, _ in own_list),
                     f"{label}: rank {r}'s slices in the merged trace")
        o_start, o_end = offsets[r]
        if len(got) == len(own_list) and own_list:
            # The offset is straight-line between start and end: bounded by the two.
            lo, hi = min(o_start, o_end), max(o_start, o_end)
            moved = [ts0 - ts1 for (_, _, ts0, _), (_, _, ts1, _) in zip(own_list, got)]
            kc.check(all(lo - 1 <= m <= hi + 1 for m in moved),
                     f"{label}: rank {r}'s slices moved by its offset ({lo}..{hi} ns): {min(moved)}..{max(moved)}")
    check_report(label, wd, prefixes, runs, merged_slices, procs)

    # OTF2: a process group per rank with exactly its events.
    try:
        ar = otf2_read.read(out + ".otf2/traces.otf2")
    except RuntimeError as ex:
        kc.check(False, f"{label}: otf2-print reads the merged archive ({ex})")
        return
    groups = {gid: g for gid, g in ar["groups"].items() if g["type"] == "PROCESS"}
    kc.expect_eq(len(groups), NP, f"{label}: a process location group per rank")
    enters = Counter()
    for loc, evs in ar["events"].items():
        g = ar["locations"][loc]["group"]
        while ar["groups"][g]["creator"] is not None:
            g = ar["groups"][g]["creator"]
        enters[ar["groups"][g]["name"].split(" on ")[0]] += sum(1 for e in evs if e[0] == "ENTER")
    for r in range(NP):
        with open(prefixes[r] + ".trace.json") as f:
            doc = kc.json_load(f)
        want = sum(1 for e in doc["traceEvents"] if e.get("ph") in ("X", "i", "b"))
        kc.expect_eq(enters.get(f"{EXE} rank {r}", 0), want, f"{label}: rank {r}'s ENTER events = its Chrome events")


# The library alone: aligned by the wall-clock references (the shifted rank's moves with its clock).
wd = kc.workdir()
wrapper = shift_wrapper(wd)
env = {"OMP_TOOL_LIBRARIES": lib, "KOKKOS_PROFILE_LIBRARY": lib, "KOKKOS_TOOLS_LIBS": lib,
       "KOB_ARGS": "--output=r-%r --quiet --format=perfetto,chrome,json"}
rc, out, err = mpirun_run(env, wd, [wrapper])
if kc.check(rc is not None, f"library alone: no hang (killed after {TIMEOUT} s)"):
    kc.expect_eq(rc, base_rc, "library alone: exit status")
    kc.expect_eq(out, base_out, "library alone: stdout")
    check_merge("library alone", wd, "wall clock")

# kob run --mpi: the PMPI layer measures the offsets to rank 0.
if os.path.isfile(layer):
    wd = kc.workdir()
    wrapper = shift_wrapper(wd)
    rc, out, err = mpirun_run({"OMP_NUM_THREADS": "2"}, wd,
                              [wrapper, kob, "run", "--mpi", "--output=r-%r", "--quiet", "--format=perfetto,chrome,json", "--"])
    if kc.check(rc is not None, f"kob run --mpi: no hang (killed after {TIMEOUT} s)"):
        kc.expect_eq(rc, base_rc, "kob run --mpi: exit status")
        kc.expect_eq(out, base_out, "kob run --mpi: stdout")
        check_merge("kob run --mpi", wd, "mpi")
    # Kokkos alone loads the tool (no OMPT): it would write its files at Kokkos::finalize, before
    # MPI_Finalize; with the layer attached it waits for the end offsets.
    wd = kc.workdir()
    env = {"KOKKOS_PROFILE_LIBRARY": lib, "KOKKOS_TOOLS_LIBS": lib, "LD_PRELOAD": layer,
           "KOB_ARGS": "--output=k-%r --quiet --format=json"}
    rc, out, err = mpirun_run(env, wd)
    if kc.check(rc is not None, f"Kokkos route with the layer: no hang (killed after {TIMEOUT} s)"):
        kc.expect_eq((rc, out), (base_rc, base_out), "Kokkos route with the layer: exit status and stdout")
        for r in range(NP):
            try:
                with open(os.path.join(wd, f"k-{r}.summary.json")) as f:
                    mpi = kc.json_load(f)["otherData"].get("mpi", {})
            except (OSError, ValueError) as ex:
                kc.check(False, f"Kokkos route with the layer: rank {r}'s summary ({ex})")
                continue
            kc.check("clock_start" in mpi and "clock_end" in mpi,
                     f"Kokkos route with the layer: rank {r}'s files written after MPI_Finalize's offsets: {mpi}")
else:
    kc.check(False, f"the MPI layer {layer} is built beside kob (MPI was found for this test)")
# Usage errors and unreadable runs: one `kob: ` line each, exit 2 / 1.
wd = kc.workdir()
for args, want_rc, what in ((["-o", os.path.join(wd, "x")], 2, "no RUN"),
                            ([os.path.join(wd, "r-0"), "-o", os.path.join(wd, "x"), "--to=chrome"], 2, "--to=chrome"),
                            ([os.path.join(wd, "missing"), "-o", os.path.join(wd, "x")], 1, "a missing run")):
    rc, out, err = kc.run([kob, "merge"] + args)
    lines = [l for l in err.splitlines() if l.strip()]
    kc.expect_eq((rc, len(lines), all(l.startswith("kob: ") for l in lines)), (want_rc, 1, True),
                 f"kob merge with {what}: exit status and one kob: line ({err.strip()})")
kc.finish()
