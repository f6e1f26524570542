"""Both summary engines on raw traces written by hand (make_raw_trace): summary.json and summary.txt
byte for byte the same, with the per-thread engine covering each (a run cut short leaves a file
with a cut tail, which the engine reads as a damaged file). What the files hold is checked against
the trace's own make-up: N kernels, each with a parallel region of two implicit tasks."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kob", required=True)
ap.add_argument("--maker", required=True)
args = ap.parse_args()

N = 40
work = kc.workdir()
# mode: (Kokkos kernel calls, parallel regions, implicit tasks, regions counted for the kernel)
cases = {
    "clean": (N, N, 2 * N, N),
    "lost": (N, N, 2 * N, N),
    "flushed": (N, N, 2 * N, N),
    # The last kernel, its region and both tasks open at the end: cut at each thread's last event.
    "crash": (N, N, 2 * N, N),
    # The last region's tasks both ended, the region and its kernel not: its team is those two.
    "crash_team_done": (N, N, 2 * N, N),
}
for mode, (calls, regions, tasks, kernel_regions) in cases.items():
    path = os.path.join(work, mode + ".kob")
    rc, _, err = kc.run([args.maker, path, str(N), mode])
    kc.expect_eq(rc, 0, f"make_raw_trace {mode} exit status ({err})")
    files = {}
    for engine in ("builder", "per-thread"):
        prefix = os.path.join(work, f"{mode}-{engine}")
        rc, _, err = kc.run([args.kob, "convert", path, "--to=json,summary", f"--output={prefix}", "--quiet"], {"KOB_ENGINE": engine})
        kc.expect_eq(rc, 0, f"{mode}: kob convert ({engine}) exit status ({err.strip()[-300:]})")
        if engine == "per-thread":
            kc.expect_eq([l for l in err.splitlines() if "declined" in l], [], f"{mode}: the per-thread engine covered the run")
        files[engine] = {ext: open(prefix + ext, "rb").read() for ext in (".summary.json", ".summary.txt")}
    for ext in (".summary.json", ".summary.txt"):
        kc.check(files["per-thread"][ext] == files["builder"][ext], f"{mode}: {ext}: the per-thread engine's file is the builder's")
    s = json.loads(files["per-thread"][".summary.json"])
    kernel = [k for k in s["kernels"] if k["name"] == "raw_kernel"]
    kc.expect_eq(len(kernel), 1, f"{mode}: one row for raw_kernel")
    kc.expect_eq(kernel[0]["calls"], calls, f"{mode}: raw_kernel calls")
    kc.expect_eq(s["openmp"]["parallel_regions"], regions, f"{mode}: parallel regions")
    kc.expect_eq(s["openmp"]["implicit_tasks"], tasks, f"{mode}: implicit tasks")
    per_kernel = [k for k in s["openmp"]["kernels"] if k["name"] == "raw_kernel"]
    kc.expect_eq(len(per_kernel), 1, f"{mode}: raw_kernel's OpenMP row")
    kc.expect_eq(per_kernel[0]["parallel_regions"], kernel_regions, f"{mode}: raw_kernel's parallel regions")
kc.finish()
