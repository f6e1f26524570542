"""The library's own files and `kob convert` of its raw trace are the same: runs the Kokkos+OpenMP
sample under the library (both routes), converts PREFIX.kob into a second prefix and compares the
documents. With --case (the OpenMP edge-case program's target_nowait), the run has libomp's
hidden-helper team, which kob convert recognises from the runtime's code range in the raw trace.
Skipped (exit 77) while the library writes no raw trace (before the recording side of issue 8 is
merged)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--case", help="argument of the program (openmp_edge_cases' case); no Kokkos then")
a = ap.parse_args()

lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "lib")
env = {"OMP_NUM_THREADS": "2", "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet --format=all"}
rc, _, err = kc.run([os.path.abspath(a.program)] + ([a.case] if a.case else []), env, cwd=wd)
kc.expect_eq(rc, 0, "sample exit code")
if not os.path.exists(prefix + ".kob"):
    print("SKIP: the library wrote no raw trace", prefix + ".kob")
    sys.exit(77)

conv = os.path.join(wd, "conv")
rc, _, err = kc.run([a.kob, "convert", prefix + ".kob", f"--output={conv}", "--quiet"])  # the recorded formats
kc.expect_eq(rc, 0, f"kob convert exit status ({err.strip()})")
lib_trace, lib_summary = kc.load_outputs(prefix)
conv_trace, conv_summary = kc.load_outputs(conv)
kc.validate_trace(conv_trace)
if a.case:
    helpers = [e for e in lib_trace["traceEvents"] if e.get("name") == "thread_name" and
               e["args"]["name"].startswith("hidden helper ")]
    kc.expect_eq(len(helpers), 8, "the library's trace has the 8 hidden-helper tracks")
    kc.expect_eq(conv_summary["openmp"]["hidden_helper_threads"], 8, "kob convert's summary counts them")
else:
    kc.check(len(kc.events(lib_trace, "kokkos.kernel", "X")) > 0, "the library's trace has kernels")
kc.expect_eq(conv_summary, lib_summary, "summary.json from kob convert equals the library's")
kc.expect_eq(conv_trace["otherData"], lib_trace["otherData"], "otherData")
kc.check(conv_trace == lib_trace, "trace.json from kob convert equals the library's")
with open(prefix + ".summary.txt") as f1, open(conv + ".summary.txt") as f2:
    kc.expect_eq(f2.read(), f1.read(), "summary.txt")
with open(prefix + ".pftrace", "rb") as f1, open(conv + ".pftrace", "rb") as f2:
    kc.check(f1.read() == f2.read(), ".pftrace from kob convert equals the library's, byte for byte")
kc.check_pftrace_rules(conv + ".pftrace")
with open(prefix + ".html", "rb") as f1, open(conv + ".html", "rb") as f2:
    kc.check(f1.read() == f2.read(), "the HTML report from kob convert equals the library's, byte for byte")
kc.finish()
