"""SIGTERM while the thread it lands on holds one of the tool's locks: the files are still written.
The outputs are written by the tool's watcher thread while the signalled thread waits in its
handler; a thread interrupted while it held a lock that write needs (here: interning a kernel name
never seen, which takes the name table's lock and then the raw trace's) made the watcher wait for
it until the handler's 10 s limit ended the process without its files (the soak saw it once:
issue 41 point 6). The handler now defers such a signal until the thread lets go.

kokkos4_driver launches 400,000 kernels each with a name of its own on the main thread, so most of
its time is spent in the naming lock; each of 20 runs gets SIGTERM a different while after it says
"ready" (its first kernel ended: the handlers are in place and at least one kernel is recorded,
however slow a loaded machine makes the run). Every run must end by SIGTERM, as without the tool,
with its summary.json complete and the kernels before the signal in it."""
import argparse
import os
import signal
import subprocess
import time

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--driver", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
driver, lib = os.path.abspath(a.driver), os.path.abspath(a.lib)
RUNS, KERNELS = 20, 400_000
env = kc.program_env(unset=("KOB_ARGS", "KOKKOS_TOOLS_ARGS", "LD_PRELOAD"))
for i in range(RUNS):
    wd = kc.workdir()
    p = subprocess.Popen([driver, lib, f"--kernels={KERNELS}", "--unique-names", "--", "--quiet", f"--output={wd}/s",
                          "--format=json"], env=env, cwd=wd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = p.stdout.readline().strip()
    time.sleep(0.002 + 0.004 * i)  # spread over the first 80 ms of naming
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        kc.check(False, f"run {i}: the program ended within 120 s of SIGTERM")
        continue
    kc.expect_eq((ready, p.returncode), ("ready", -signal.SIGTERM), f"run {i}: ended by SIGTERM, as without the tool")
    path = f"{wd}/s.summary.json"
    if kc.check(os.path.exists(path), f"run {i}: summary.json written ({err[-300:]!r})"):
        s = kc.load_json(path)
        calls = sum(k["calls"] for k in s["kernels"])
        kc.check(0 < calls < KERNELS, f"run {i}: the kernels before the signal are in it ({calls})")
        kc.expect_eq(s["dropped_events"], 0, f"run {i}: nothing dropped")
kc.finish()
