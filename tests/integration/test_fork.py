"""fork() with the OMPT route active: the child that goes on (exit), that calls _exit, or that
execs must never hang; a child that exits writes its own events only, under its own pid, and
never touches its parent's files. Every run has a time limit: a hang fails the test. The raw trace
a child makes for itself holds what its own exit write used (the session's facts, its own start
time and prefix): `kob convert` of it gives the same files as the child wrote."""
import argparse
import glob
import json
import os
import signal
import subprocess
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
a = ap.parse_args()
prog, lib, kob = os.path.abspath(a.program), os.path.abspath(a.lib), os.path.abspath(a.kob)
T = 2
TIMEOUT = 30


def run(args, env_extra, cwd, unset=()):
    """Runs the program in its own process group; returns (pid, rc, stdout, stderr), rc None on a
    hang (the whole group is killed)."""
    env = kc.program_env({"OMP_NUM_THREADS": str(T), "OMP_PROC_BIND": "false", **env_extra}, unset)
    p = subprocess.Popen([prog] + args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        kc.check_no_sanitizer_report(err, prog)
        return p.pid, p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return p.pid, None, out, err


def sets(wd):
    """The file sets written in wd: {prefix: trace document}."""
    found = {}
    for path in glob.glob(os.path.join(wd, "**", "*.trace.json"), recursive=True):
        prefix = path[: -len(".trace.json")]
        for ext in (".summary.txt", ".summary.json"):
            kc.check(os.path.exists(prefix + ext), f"{prefix}{ext} written beside the trace")
        with open(path) as f:
            found[os.path.relpath(prefix, wd)] = kc.json_load(f)
    return found


def check_convert_equals(wd, prefix, what):
    """kob convert of PREFIX.kob writes the same files as the process wrote at its exit."""
    conv = os.path.join(kc.workdir(), os.path.basename(prefix))  # not in wd: sets() would find them
    rc, _, err = kc.run([kob, "convert", os.path.join(wd, prefix + ".kob"), f"--output={conv}",
                         "--to=chrome,summary,json", "--quiet"])
    kc.expect_eq(rc, 0, f"{what}: kob convert {prefix}.kob ({err.strip()})")
    for ext in (".trace.json", ".summary.json"):
        if os.path.exists(conv + ext):
            with open(os.path.join(wd, prefix + ext)) as f1, open(conv + ext) as f2:
                own, converted = kc.json_load(f1), kc.json_load(f2)
            differ = sorted(k for k in set(own) | set(converted) if own.get(k) != converted.get(k))
            if "otherData" in differ:
                differ += [f"otherData.{k}: {own['otherData'].get(k)!r} vs {converted['otherData'].get(k)!r}"
                           for k in sorted(set(own["otherData"]) | set(converted["otherData"]))
                           if own["otherData"].get(k) != converted["otherData"].get(k)]
            kc.expect_eq(differ, [], f"{what}: {prefix}{ext} from kob convert equals the process's own (keys that differ)")
    with open(os.path.join(wd, prefix + ".summary.txt")) as f1, open(conv + ".summary.txt") as f2:
        kc.expect_eq(f2.read(), f1.read(), f"{what}: {prefix}.summary.txt from kob convert")


def parallels(doc):
    return len(kc.events(doc, "omp.parallel", "X"))


# What each mode's child does and the exit status the parent reports (stdout compares it).
MODES = {"exit": 2, "_exit": None, "exec": None}
# --output value (None: the default) -> expected parent and child prefix for pids (P, C).
OUTPUTS = {
    None: (lambda P: f"kob-fork_omp-{P}", lambda C: f"kob-fork_omp-{C}"),
    "run": (lambda P: "run", lambda C: f"run-{C}"),
    "run-%p": (lambda P: f"run-{P}", lambda C: f"run-{C}"),
    "out/": (lambda P: f"out/kob-fork_omp-{P}", lambda C: f"out/kob-fork_omp-{C}"),
}

for mode, child_regions in MODES.items():
    base_wd = kc.workdir()
    _, base_rc, base_out, _ = run([mode], {}, base_wd, unset=("OMP_TOOL_LIBRARIES", "KOB_ARGS", "LD_PRELOAD"))
    kc.expect_eq(base_rc, 0, f"{mode}: the program runs as planned without the tool")
    routes = [("OMP_TOOL_LIBRARIES", output) for output in OUTPUTS]
    if mode == "exit":
        routes.append(("LD_PRELOAD", None))
    for route, output in routes:
        what = f"{mode}, {route}, --output={output}"
        wd = kc.workdir()
        args = f"--quiet {kc.CHROME}" + (f" --output={output}" if output else "")
        report = kc.written_report()
        pid, rc, out, err = run([mode], {route: lib, "KOB_ARGS": args, "KOB_RUN_REPORT": report}, wd)
        if not kc.check(rc is not None, f"{what}: no hang (killed after {TIMEOUT} s; stderr: {err[-500:]!r})"):
            continue
        kc.expect_eq(rc, base_rc, f"{what}: exit code")
        kc.expect_eq(out, base_out, f"{what}: stdout (sums, child status, open descriptors)")
        lines = kc.without_sanitizer_notes(err.splitlines())
        kc.check(all(l.startswith("kokkos-ompt-bridge: ") for l in lines), f"{what}: only one-line tool messages: {lines}")
        found = sets(wd)
        parent_prefix = OUTPUTS[output][0](pid)
        # Raw traces: the parent's, and the child's only when it ends with exit (one that _exits or
        # execs before filling a slot leaves none).
        raws = sorted(os.path.relpath(p, wd)[: -len(".kob")] for p in glob.glob(os.path.join(wd, "**", "*.kob"), recursive=True))
        kc.expect_eq(raws, sorted([parent_prefix] + [p for p in found if p != parent_prefix]),
                     f"{what}: one raw trace per process that writes its files")
        kc.check(parent_prefix in found, f"{what}: the parent's files keep their name {parent_prefix}: {sorted(found)}")
        if parent_prefix in found:
            doc = found.pop(parent_prefix)
            kc.validate_trace(doc)
            kc.expect_eq(doc["otherData"]["pid"], pid, f"{what}: the parent's trace is the parent's")
            kc.expect_eq(parallels(doc), 5, f"{what}: parallel regions of the parent (3 before the fork, 2 after)")
        notes = [l for l in lines if "no placeholder that tells this process" in l]
        if child_regions is None:
            kc.expect_eq(sorted(found), [], f"{what}: a child that ends with _exit or exec writes nothing")
            kc.expect_eq(notes, [], f"{what}: no naming note")
            continue
        kc.expect_eq(len(found), 1, f"{what}: one file set for the child: {sorted(found)}")
        for prefix, doc in found.items():
            child = doc["otherData"]["pid"]
            kc.check(child != pid, f"{what}: the child's trace has its own pid")
            kc.expect_eq(prefix, OUTPUTS[output][1](child), f"{what}: the child's files are named after its pid")
            kc.validate_trace(doc)
            kc.expect_eq(parallels(doc), child_regions, f"{what}: parallel regions of the child only")
            tasks = Counter(e["name"] for e in kc.events(doc, "omp.implicit_task", "X"))
            kc.expect_eq(tasks["implicit task"], child_regions * T, f"{what}: the child's implicit tasks")
            kc.expect_eq(tasks["initial task"], 1, f"{what}: the child's initial task")
            with open(os.path.join(wd, prefix + ".summary.json")) as f:
                kc.expect_eq(kc.json_load(f)["problems"], [], f"{what}: nothing odd in the child's events")
            check_convert_equals(wd, prefix, what)
        kc.expect_eq(len(notes), 1 if output == "run" else 0, f"{what}: one line says the child's prefix got its pid")
        writers = [p for p, _ in kc.written(report)]
        kc.check(len(writers) == 2 and len(set(writers)) == 2 and pid in writers, f"{what}: parent and child each write once: {writers}")
        kc.expect_eq(glob.glob(os.path.join(wd, "**", "*.tmp.*"), recursive=True), [], f"{what}: no temporary file left")

# A child forked a second after its parent started: its own start time (and its own prefix) are
# in its raw trace, and kob convert of either process's raw trace gives that process's files.
wd = kc.workdir()
pid, rc, out, err = run(["exit", "late"], {"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--quiet {kc.CHROME}"}, wd)
kc.expect_eq(rc, 0, "late fork: exit code")
found = sets(wd)
kc.expect_eq(len(found), 2, f"late fork: parent and child files: {sorted(found)}")
starts = {p: doc["otherData"]["start_time"] for p, doc in found.items()}
kc.expect_eq(len(set(starts.values())), 2, f"late fork: the child's start time is its own: {starts}")
for prefix in found:
    check_convert_equals(wd, prefix, f"late fork, {prefix}")
kc.finish()
