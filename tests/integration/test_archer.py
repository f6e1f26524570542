"""LLVM's race detector archer (libarcher.so, an OMPT tool) run beside this library, by each route
(OMP_TOOL_LIBRARIES after ours, KOB_TOOL_LIBRARIES, kob run --chain) on archer_race, a
-fsanitize=thread -fopenmp program with one data race at a known line. archer alone reports that
one race at that line; beside this library it reports the same and nothing else (without archer's
callbacks ThreadSanitizer also reports the program's OpenMP-synchronised hand-overs as races: the
run with this library alone shows that), the program's stdout and exit code (ThreadSanitizer's 66)
are those of archer alone, and this library's trace counts what it counts alone."""
import argparse
import os
import re
import subprocess
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--archer", required=True)
a = ap.parse_args()
program, lib, kob, archer = (os.path.abspath(p) for p in (a.program, a.lib, a.kob, a.archer))

wd = kc.workdir()
UNSET = ("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "OMP_TOOL_LIBRARIES", "KOB_TOOL_LIBRARIES",
         "LD_PRELOAD")
# archer asks for ignore_noninstrumented_modules (libomp is not instrumented).
BASE = {"TSAN_OPTIONS": "ignore_noninstrumented_modules=1", "OMP_NUM_THREADS": "2"}
WARNING = "WARNING: ThreadSanitizer: data race"


def run(name, cmd, env):
    """The program's exit code, stdout and stderr; not kc.run: a ThreadSanitizer report is expected here."""
    full = dict(os.environ)
    for k in UNSET:
        full.pop(k, None)
    full.update({**BASE, **env})
    p = subprocess.run(cmd, env=full, cwd=wd, capture_output=True, text=True, timeout=300)
    with open(os.path.join(wd, name + ".stderr"), "w") as f:
        f.write(p.stderr)
    return p.returncode, p.stdout, p.stderr


def races(err):
    """The file:line of each race ThreadSanitizer summed up."""
    return re.findall(r"SUMMARY: ThreadSanitizer: data race \S*/(archer_race\.cpp:\d+):\d+", err)


def ours(name, extra=""):
    prefix = os.path.join(wd, name)
    return prefix, f"--output={prefix} --quiet --format=chrome,summary,json {extra}".strip()


def trace_counts(prefix):
    """Events per category, name and phase, less the dependence pair (found only while the first task
    is still open: timing)."""
    doc = kc.load_json(prefix + ".trace.json")
    kc.validate_trace(doc)
    c = Counter((e.get("cat"), e.get("name"), e.get("ph")) for e in doc["traceEvents"] if e.get("ph") != "M")
    for k in [k for k in c if k[0] == "omp.dependence" and k[1].split(" ")[0] == "dependence"]:
        del c[k]
    return c


def omp_summary(prefix):
    """The summary's OpenMP counts (not task_dependences, timing)."""
    o = kc.load_json(prefix + ".summary.json")["openmp"]
    return {k: o[k] for k in ("parallel_regions", "implicit_tasks", "initial_tasks", "work", "sync", "tasks", "dependences",
                              "tasks_with_dependences", "mutex", "cancels", "errors")}


# archer alone: the one race, at the line the program names.
rc, out, err = run("archer", [program], {"OMP_TOOL_LIBRARIES": archer})
m = re.search(r"race at line (\d+)", out)
kc.check(m is not None, f"the program names its racy line: {out!r}")
line = f"archer_race.cpp:{m.group(1) if m else '?'}"
kc.expect_eq(rc, 66, "archer alone: ThreadSanitizer's exit code")
kc.expect_eq(races(err), [line], "archer alone: one race, at the program's racy line")
kc.expect_eq(err.count(WARNING), 1, "archer alone: one ThreadSanitizer warning")
base = (rc, out)

# This library alone: its own counts, and more reports than the one race (archer's work shows).
alone_prefix, args = ours("alone")
rc, out, err = run("alone", [program], {"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
kc.expect_eq(out, base[1], "this library alone: stdout")
kc.check(any(r != line for r in races(err)), f"without archer ThreadSanitizer reports a synchronised hand-over too: {races(err)}")
alone = trace_counts(alone_prefix)
alone_summary = omp_summary(alone_prefix)
kc.check(sum(alone.values()) > 0 and any(k[0] == "omp.parallel" for k in alone), f"this library alone recorded the region: {alone}")

routes = [
    ("after ours in OMP_TOOL_LIBRARIES", [program], {"OMP_TOOL_LIBRARIES": f"{lib}:{archer}"}),
    ("KOB_TOOL_LIBRARIES", [program], {"OMP_TOOL_LIBRARIES": lib, "KOB_TOOL_LIBRARIES": archer}),
    ("kob run --chain", None, {}),
]
for i, (what, cmd, env) in enumerate(routes):
    prefix, args = ours(f"route{i}")
    if cmd is None:  # kob run sets the variables; --output etc. go through it
        cmd = [kob, "run", f"--chain={archer}"] + args.split() + ["--", program]
    else:
        env = {**env, "KOB_ARGS": args}
    rc, out, err = run(f"route{i}", cmd, env)
    kc.expect_eq((rc, out), base, f"{what}: exit code and stdout as with archer alone")
    kc.expect_eq(races(err), [line], f"{what}: archer reports the one race, at the program's racy line")
    kc.expect_eq(err.count(WARNING), 1, f"{what}: one ThreadSanitizer warning")
    kc.check(not any("kokkos-ompt-bridge:" in l for l in err.splitlines()), f"{what}: no line of this library's")
    kc.expect_eq(trace_counts(prefix), alone, f"{what}: this library's trace counts as alone")
    kc.expect_eq(omp_summary(prefix), alone_summary, f"{what}: this library's summary counts as alone")
    kc.expect_eq(kc.load_json(prefix + ".summary.json")["dropped_events"], 0, f"{what}: nothing dropped")
    if i == 0:
        for l in err.splitlines():
            if "SUMMARY: ThreadSanitizer" in l:
                print("archer beside this library:", l)

kc.finish()
