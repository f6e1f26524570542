"""Nothing lost on a busy machine. While busy processes occupy every core this process may use (one
CPU-bound loop per core, for the whole test):
- Kokkos' core unit tests run three times under the library (KOKKOS_PROFILE_LIBRARY +
  OMP_TOOL_LIBRARIES) and each summary's counts equal count_tool's (an independent Kokkos tool that
  only counts, run once beside the same load): kernels per name, kind and execution space, region
  pushes, fences, allocations and frees per space, deep copies and their bytes, and
  dropped_events == 0 (read from the key that exists);
- many_tiny_kernels runs 300,000 kernels on 2 threads with the writer thread also put in the
  idle class by hand (chrt --idle, as a job whose cores are all taken leaves it): every kernel is in
  the summary, nothing dropped, tool.flushes is the sum of its per-thread counts, and the SQL
  database has a tool_flushes row for each. (That each
  flush is a "tool: flush" span is checked exactly in the unit tests, with a writer that copies
  nothing.)
Before the threads copied their own slots (they waited 50 ms for the writer, then dropped), the
second case (at 2,000,000 kernels) lost 111,155 and 174,697 events in two runs here."""
import argparse
import os
import sqlite3
import subprocess
import sys
import time

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--tests", required=True, help="the Kokkos unit-test program")
ap.add_argument("--tiny", required=True, help="many_tiny_kernels")
ap.add_argument("--lib", required=True)
ap.add_argument("--count-tool", required=True)
a = ap.parse_args()
tests, tiny, lib, counter = (os.path.abspath(p) for p in (a.tests, a.tiny, a.lib, a.count_tool))
if not os.path.exists(tests):
    kc.check(False, f"{tests} is missing: scripts/setup.sh builds it")
    kc.finish()
wd = kc.workdir()
TOOL_VARS = ["KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "LD_PRELOAD"]
BASE = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"}
TINY = 300_000

cores = len(os.sched_getaffinity(0))
busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
print(f"{cores} busy processes beside the runs")


def starve_writer(p):
    """Puts the kob-writer thread of process p in SCHED_IDLE as soon as it exists (it is already, by
    design; this makes sure, and says how the losses were reproduced)."""
    for _ in range(2000):
        for tid in os.listdir(f"/proc/{p.pid}/task") if os.path.isdir(f"/proc/{p.pid}/task") else []:
            try:
                with open(f"/proc/{p.pid}/task/{tid}/comm") as f:
                    if f.read().strip() == "kob-writer":
                        subprocess.run(["chrt", "--idle", "-p", "0", tid], capture_output=True)
                        return True
            except OSError:
                pass
        if p.poll() is not None:
            return False
        time.sleep(0.005)
    return False


try:
    rc, _, err = kc.run([tests], {**BASE, "KOKKOS_PROFILE_LIBRARY": counter,
                                                     "COUNT_TOOL_OUT": os.path.join(wd, "count.json")}, cwd=wd, unset=TOOL_VARS, timeout=1200)
    count = kc.load_json(os.path.join(wd, "count.json"))
    print(f"count_tool: {sum(k[3] for k in count['kernels'])} kernels, {count['deep_copies'][0]} deep copies")
    for i in range(3):
        prefix = os.path.join(wd, f"busy{i}")
        rc_i, _, err_i = kc.run([tests], {**BASE, "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
                                                             "KOB_ARGS": f"--output={prefix} --quiet --format=json"},
                                cwd=wd, unset=TOOL_VARS, timeout=1200)
        kc.expect_eq(rc_i, rc, f"run {i}: the exit status of the run without the library")
        s = kc.load_json(prefix + ".summary.json")
        kc.expect_kokkos_counts(s, count, f"unit tests, busy run {i}")
        print(f"run {i}: {s['tool']['flushes']} tool flushes, {s['tool']['flush_ns'] / 1e6:.1f} ms")

    prefix = os.path.join(wd, "tiny")
    env = kc.program_env({**BASE, "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
                          "KOB_ARGS": f"--output={prefix} --quiet --format=json,sqlite"}, unset=TOOL_VARS)
    p = subprocess.Popen([tiny, str(TINY)], env=env, cwd=wd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    starved = starve_writer(p)
    out, err = p.communicate(timeout=1500)
    kc.expect_eq(p.returncode, 0, f"many_tiny_kernels exit status ({err[-300:]!r})")
    kc.check(starved, "the writer thread was found and put in the idle class")
    s = kc.load_json(prefix + ".summary.json")
    calls = {k["name"]: k["calls"] for k in s["kernels"]}
    kc.expect_eq(calls["tiny"], TINY, f"{TINY} kernels: every one in the summary")
    kc.expect_eq(s["dropped_events"], 0, "many_tiny_kernels: nothing dropped")
    per_thread = {t["track"]: t["flushes"] for t in s["tool"]["threads"]}
    kc.expect_eq(sum(per_thread.values()), s["tool"]["flushes"], "tool.flushes is the sum over the threads")
    db = sqlite3.connect(prefix + ".sqlite")
    rows = dict(db.execute("SELECT track, COUNT(*) FROM tool_flushes GROUP BY track"))
    kc.expect_eq(rows, per_thread, "the database's tool_flushes rows per track = summary.json's flushes per thread")
    print(f"many_tiny_kernels: {s['tool']['flushes']} tool flushes on {len(per_thread)} threads, "
          f"{s['tool']['flush_ns'] / 1e6:.1f} ms")
finally:
    for b in busy:
        b.kill()
    for b in busy:
        b.wait()
kc.finish()
