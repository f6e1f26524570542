"""`kob run [TOOL OPTIONS] -- PROGRAM`: loads the library the way users load it (kob sets the
variables itself), passes the program's output and exit status through (a signal included, and a
SIGTERM sent to kob reaches the program), and names the files each process wrote; bad usage is one
line and status 2, a program that cannot be started 127; `kob summary` prints the run's summary."""
import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kob", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--sample", required=True, help="the Kokkos + OpenMP sample")
ap.add_argument("--victim", required=True, help="signal_victim")
ap.add_argument("--fork", required=True, help="fork_omp")
a = ap.parse_args()
kob = os.path.abspath(a.kob)
lib = os.path.abspath(a.lib)
TOOL_VARS = ["KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "KOKKOS_TOOLS_ARGS"]
ENV = {"OMP_NUM_THREADS": "2"}


def kernels(doc):
    return sorted(e["name"] for e in kc.events(doc, "kokkos.kernel", "X"))


def one_kob_line(err, part, what):
    lines = [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip()]
    kc.check(len(lines) == 1 and lines[0].startswith("kob: ") and part in lines[0], f"{what}: one line with {part!r}: {lines}")


wd = kc.workdir()
sample = os.path.abspath(a.sample)

# The sample without the tool, and loaded the usual way: the reference output and events.
rc0, out0, _ = kc.run([sample], ENV, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc0, 0, "the sample without the tool")
ref = os.path.join(wd, "ref")
rc, _, err = kc.run([sample], {**ENV, "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
                               "KOB_ARGS": f"--quiet --output={ref} {kc.CHROME}"}, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc, 0, f"the sample with the tool through the variables ({err[-300:]!r})")
ref_trace, _ = kc.load_outputs(ref)

# kob run: the same events, the same stdout, a line naming the files.
prefix = os.path.join(wd, "run")
raw_before, real_before = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), time.time_ns()
rc, out, err = kc.run([kob, "run", f"--output={prefix}", kc.CHROME, "--", sample], ENV, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc, 0, f"kob run: the sample's exit status ({err[-300:]!r})")
kc.expect_eq(out, out0, "kob run: the program's stdout unchanged")
files = [prefix + ext for ext in (".kob", ".trace.json", ".summary.txt", ".summary.json")]
for f in files:
    kc.check(os.path.isfile(f), f"kob run: {os.path.basename(f)} written")
named = [l for l in err.splitlines() if l.startswith("kob: pid ")]
kc.expect_eq(len(named), 1, f"kob run: one line naming the files: {named}")
if named:
    kc.check(kc.wrote_line(named[0]).endswith(" wrote " + ", ".join(files)), f"kob run: the line names every file: {named[0]!r}")
    kc.check(named[0].endswith(f" (next: kob report {prefix} for the HTML report)"), f"kob run: the line says what to do next: {named[0]!r}")
    kc.check(named[0].startswith("kob: pid ") and named[0].split()[2].isdigit(), f"kob run: the line names the pid: {named[0]!r}")
raw_after, real_after = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), time.time_ns()
trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
# The run's time line against the wall clock, read together at its start (for merging runs).
ref = trace["otherData"].get("wall_reference", {})
kc.check(raw_before <= ref.get("monotonic_raw_ns", 0) <= raw_after, f"wall_reference: CLOCK_MONOTONIC_RAW within the run: {ref}")
kc.check(real_before <= ref.get("realtime_ns", 0) <= real_after, f"wall_reference: CLOCK_REALTIME within the run: {ref}")
kc.check(abs((ref.get("realtime_ns", 0) - real_before) - (ref.get("monotonic_raw_ns", 0) - raw_before)) < 50_000_000,
         f"wall_reference: both clocks read together (same offset from before the run, within 50 ms): {ref}")
kc.expect_eq(summary["otherData"].get("wall_reference"), ref, "wall_reference: the same in the summary")
kc.expect_eq(kernels(trace), kernels(ref_trace), "kob run: the same Kokkos kernels as loading through the variables")
kc.expect_eq(len(kc.events(trace, "omp.parallel", "X")), len(kc.events(ref_trace, "omp.parallel", "X")),
             "kob run: the same OpenMP parallel regions")
kc.check(len(kernels(trace)) > 0, "kob run: kernels recorded")

# kob summary RUN: the run's text summary on stdout, the same as the file, nothing written.
before = sorted(os.listdir(wd))
rc, sout, err = kc.run([kob, "summary", prefix + ".kob"])
kc.expect_eq(rc, 0, f"kob summary: exit status ({err.strip()!r})")
with open(prefix + ".summary.txt") as f:
    kc.expect_eq(sout, f.read(), "kob summary prints the text summary the run wrote")
kc.expect_eq(sorted(os.listdir(wd)), before, "kob summary writes no file")
rc, _, err = kc.run([kob, "summary", os.path.join(wd, "missing")])
kc.expect_eq(rc, 1, "kob summary of a missing run: exit status 1")
one_kob_line(err, "cannot open", "kob summary of a missing run")

# A program that forks: one line per process, the child's files under its own name.
fprefix = os.path.join(wd, "fk")
rc, out, err = kc.run([kob, "run", f"--output={fprefix}", "--format=summary", "--", os.path.abspath(a.fork), "exit"],
                      ENV, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc, 0, f"kob run of a forking program: exit status ({err[-300:]!r})")
named = {}
for l in err.splitlines():
    if l.startswith("kob: pid ") and " wrote " in l:
        pid = l.split()[2]
        named[pid] = kc.wrote_line(l).split(" wrote ", 1)[1].split(", ")
parent = [p for p, f in named.items() if f and f[0] == fprefix + ".kob"]
child = [p for p, f in named.items() if f and f[0] == f"{fprefix}-{p}.kob"]
kc.check(len(named) == 2 and len(parent) == 1 and len(child) == 1 and parent != child,
         f"kob run of a forking program: a line for the parent and one for the child, each naming its own files: {named}")
for files_of in named.values():
    for f in files_of:
        kc.check(os.path.isfile(f), f"kob run of a forking program: {os.path.basename(f)} written")

# An --output folder that cannot be made (a file is in the way): kob says so before the program
# starts, the library writes to the current folder instead (one line), and kob's last line names
# those files; the program's output and exit status are its own.
bwd = kc.workdir()
open(os.path.join(bwd, "blocker"), "w").close()
rc, out, err = kc.run([kob, "run", "--output=blocker/sub/b1", kc.CHROME, "--", sample], ENV, cwd=bwd, unset=TOOL_VARS)
kc.expect_eq((rc, out), (0, out0), "kob run, blocked --output: the program's exit status and stdout")
lines = [l for l in err.splitlines() if l.startswith(("kob: ", "kokkos-ompt-bridge: "))]
kc.check(lines[:1] and lines[0].startswith("kob: cannot create the output directory blocker/sub/") and "current folder" in lines[0],
         f"kob run, blocked --output: kob says so first: {lines[:1]}")
kc.check(any("go to b1.* instead" in l for l in lines), f"kob run, blocked --output: the library says where the files went: {lines}")
kc.check(lines[-1:] and kc.wrote_line(lines[-1]).endswith(" wrote b1.kob, b1.trace.json, b1.summary.txt, b1.summary.json"),
         f"kob run, blocked --output: the last line names the files written: {lines[-1:]}")
kc.expect_eq(sum(" wrote " in l for l in lines), 1, "kob run: one line naming the files (kob's; the library's is left out)")
# --quiet in KOB_ARGS keeps kob quiet too.
rc, out, err = kc.run([kob, "run", "--output=q1", kc.CHROME, "--", sample], {**ENV, "KOB_ARGS": "--quiet"}, cwd=bwd, unset=TOOL_VARS)
kc.expect_eq([l for l in err.splitlines() if l.startswith("kob: ")], [], "kob run with KOB_ARGS=--quiet: no kob line")
kc.check(os.path.isfile(os.path.join(bwd, "q1.trace.json")), "kob run with KOB_ARGS=--quiet: the files written")

# A file given where a run is expected: what is wrong with it, and what to give instead.
with open(os.path.join(bwd, "err1"), "w") as f:
    f.write("not a trace\n")
for args, part in ((["summary", os.path.join(bwd, "err1")], f"{bwd}/err1 is not a kokkos-ompt-bridge raw trace"),
                   (["summary", os.path.join(bwd, "q1.summary.json")], f"q1.summary.json is a summary of a run: give its raw trace, {bwd}/q1.kob (or {bwd}/q1)"),
                   (["convert", os.path.join(bwd, "q1.trace.json")], "q1.trace.json is a Chrome trace of a run: give its raw trace"),
                   (["report", os.path.join(bwd, "q1.pftrace")], "q1.pftrace is a Perfetto trace of a run")):
    rc, out, err = kc.run([kob] + args)
    kc.expect_eq(rc, 1, f"kob {args[0]} {os.path.basename(args[1])}: exit status")
    one_kob_line(err, part, f"kob {args[0]} {os.path.basename(args[1])}")

# Exit statuses pass through; a program killed by a signal ends kob by the same signal.
rc, out, err = kc.run([kob, "run", "--quiet", "--", "sh", "-c", "echo through; exit 7"])
kc.expect_eq((rc, out), (7, "through\n"), "kob run: exit status 7 and stdout of a program that is not a Kokkos one")
rc, _, _ = kc.run([kob, "run", "--quiet", "--", "sh", "-c", "kill -USR1 $$"])
kc.expect_eq(rc, -signal.SIGUSR1, "kob run: a program ended by SIGUSR1 ends kob by SIGUSR1")

# SIGTERM to kob reaches the program: the tool writes its files, the program ends by SIGTERM.
victim = os.path.abspath(a.victim)
vprefix = os.path.join(wd, "victim")
p = subprocess.Popen([kob, "run", f"--output={vprefix}", "--quiet", kc.CHROME, "--", victim, "wait", "none", "5"],
                     env=kc.program_env(ENV, unset=TOOL_VARS), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True, start_new_session=True)
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in p.stdout] + [lines.put(None)], daemon=True).start()
try:
    while True:
        line = lines.get(timeout=120)
        if line is None or line.startswith("ran "):
            break
    os.kill(p.pid, signal.SIGTERM)  # kob's pid, not the program's
    rc = p.wait(timeout=120)
except (queue.Empty, subprocess.TimeoutExpired):
    os.killpg(p.pid, signal.SIGKILL)
    rc = None
err = p.stderr.read()
kc.check_no_sanitizer_report(err, victim)
kc.expect_eq(rc, -signal.SIGTERM, "kob run: SIGTERM sent to kob ends the program, and kob, by SIGTERM")
if kc.check(os.path.isfile(vprefix + ".trace.json"), "kob run: the program's files written at SIGTERM"):
    vtrace, _ = kc.load_outputs(vprefix)
    kc.expect_eq(kernels(vtrace).count("victim_kernel"), 5, "kob run: the 5 kernels before the signal")

# Bad usage: one line, status 2 (nothing run); a program that cannot start: 127.
for cmd, status, part in (
    ([kob, "run", "--bogus=1", "--", "true"], 2, "unknown option '--bogus'"),
    ([kob, "run", "--format=pdf", "--", "true"], 2, "--format"),
    ([kob, "run"], 2, "run needs a PROGRAM"),
    ([kob, "run", "--quiet"], 2, "run needs a PROGRAM"),
    ([kob, "run", "--", os.path.join(wd, "missing-program")], 127, "cannot run " + os.path.join(wd, "missing-program")),
):
    rc, out, err = kc.run(cmd)
    kc.expect_eq(rc, status, f"{cmd[1:]}: exit status")
    kc.expect_eq(out, "", f"{cmd[1:]}: nothing on stdout")
    one_kob_line(err, part, str(cmd[1:]))
rc, out, _ = kc.run([kob, "run", "--help"])
kc.check(rc == 0 and "usage: kob run" in out and "--format=LIST" in out, "kob run --help: usage and the tool's options")
for sub in ("convert", "summary"):
    rc, out, _ = kc.run([kob, sub, "--help"])
    kc.check(rc == 0 and f"kob {sub}" in out and "Exit status" in out, f"kob {sub} --help")
rc, out, _ = kc.run([kob, "--help"])
kc.check(rc == 0 and all(c in out for c in ("run", "convert", "summary")), "kob --help lists the commands")
rc, out, _ = kc.run([kob, "--version"])
kc.check(rc == 0 and out.startswith("kob (kokkos-ompt-bridge) "), f"kob --version: {out!r}")
kc.finish()
