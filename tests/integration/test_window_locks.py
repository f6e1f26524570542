"""The trace windows are cut while locks are held or waited for: a run in which some thread holds
or waits for a critical section at nearly every moment (contended_lock, 4 threads) converts in the
same memory whether it is long or 10x shorter, and the trace keeps every critical section (a wait
and a hold per entry, on its thread). Before, no cut was allowed while a lock was held or waited
for, so such a stretch stayed in one window: its memory grew with the run and with the threads
(the bundled tuning sample's contended section took 265 MiB to convert at 64 threads)."""
import argparse
import json
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--peak-rss", required=True, help="the peak_rss runner")
a = ap.parse_args()
prog, lib, kob = os.path.abspath(a.program), os.path.abspath(a.lib), os.path.abspath(a.kob)

THREADS = 4
LONG = 20000   # critical sections per thread: 4 x 20000 x (wait + hold) = 160 k spans
GROWTH_MIB = 4 if kc.SANITIZER_PRELOAD else 2
WINDOW = 4096  # spans per trace window
MIB = 1 << 20

wd = kc.workdir()
peak, spans = {}, {}
for n in (LONG, LONG // 10):
    raw = os.path.join(wd, f"run{n}")
    rc, out, err = kc.run([prog, str(n)], {"OMP_NUM_THREADS": str(THREADS), "OMP_TOOL_LIBRARIES": lib,
                                           "KOB_ARGS": f"--output={raw} --quiet --format=none"}, cwd=wd)
    kc.expect_eq((rc, out.split()[:2]), (0, ["contended_lock", str(n)]), f"{n}: the program's exit status and output ({err[-300:]})")
    conv = os.path.join(wd, f"conv{n}")
    # No sanitizer quarantine: the windows' freed spans would look like growth.
    p = kc.peak_rss_kib(a.peak_rss, [kob, "convert", raw + ".kob", f"--output={conv}", "--to=perfetto,chrome,summary,json", "--quiet",
                                     f"--trace-window={WINDOW}"], kc.NO_QUARANTINE, f"{n}: kob convert")
    if p is None:
        continue
    peak[n] = p
    with open(conv + ".trace.json") as f:
        doc = kc.json_load(f)
    kc.validate_trace(doc)
    mutex = [e for e in kc.events(doc, "omp.mutex", "X") if kc.construct(e) == "critical"]
    for phase in ("wait", "hold"):
        kc.expect_eq(sum(1 for e in mutex if e["args"]["phase"] == phase), THREADS * n, f"{n}: a critical {phase} per entry")
    kc.expect_eq(len({e["tid"] for e in mutex}), THREADS, f"{n}: critical sections on every thread")
    spans[n] = sum(1 for e in doc["traceEvents"] if e["ph"] == "X")
    print(f"{n} critical sections per thread: {spans[n]} spans, kob convert peak RSS {peak[n]} KiB")
    del doc

if len(peak) == 2:
    # The premise: the long run's spans kept in one window (at least 64 bytes each) would show.
    kc.check(spans[LONG] * 64 > 2 * GROWTH_MIB * MIB, f"{spans[LONG]} spans kept whole would exceed the growth allowed 2x over")
    kc.check(peak[LONG] - peak[LONG // 10] <= GROWTH_MIB * 1024,
             f"kob convert's peak RSS does not grow with the locked stretch: {peak[LONG // 10]} KiB for {LONG // 10} "
             f"critical sections per thread, {peak[LONG]} KiB for {LONG}")
kc.finish()
