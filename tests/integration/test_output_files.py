"""Output file names and writes: --output placeholders, DIR/, the -r<rank> suffix, bad values, and
writes that fail (file size limit) or race: every file is whole or absent, with one line per
failure, and the program's exit code and stdout never change. A run is never lost to its output
path: a missing folder is made; where the folder cannot be made, the files go to the current
folder, else $TMPDIR, with one line saying where. --quiet: no "wrote" line either."""
import argparse
import glob
import json
import os
import resource
import signal
import socket
import subprocess

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)
EXTS = (".trace.json", ".summary.txt", ".summary.json")
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")


def start(kob_args, cwd, env_extra=None, fsize=None):
    env = kc.program_env({"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false", "OMP_TOOL_LIBRARIES": lib,
                          "KOB_ARGS": f"{kc.CHROME} {kob_args}", **(env_extra or {})}, unset=RANK_VARS)

    def limit():
        # The file size limit makes writes past it fail with EFBIG; SIGXFSZ is ignored here, by the
        # launcher, as a program that expects such failures would do (the tool leaves it alone).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.Popen([prog, "none"], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=limit if fsize else None, restore_signals=not fsize)


def run(kob_args, cwd, env_extra=None, fsize=None):
    p = start(kob_args, cwd, env_extra, fsize)
    out, err = p.communicate(timeout=120)
    kc.check_no_sanitizer_report(err, prog)
    return p.pid, p.returncode, out, err


def files(wd):
    return sorted(os.path.relpath(f, wd) for f in glob.glob(os.path.join(wd, "**", "*"), recursive=True) if os.path.isfile(f))


def tool_lines(err):
    return [l for l in err.splitlines() if l.startswith("kokkos-ompt-bridge: ") and not l.startswith("kokkos-ompt-bridge: wrote")]


base = subprocess.run([prog, "none"], capture_output=True, text=True, timeout=120,
                      env={**{k: v for k, v in os.environ.items() if k not in RANK_VARS}, "OMP_NUM_THREADS": "2"})
kc.expect_eq(base.returncode, 0, "the program runs without the tool")
host = socket.gethostname()


def check_run(what, rc, out, err):
    kc.expect_eq(rc, base.returncode, f"{what}: exit code")
    kc.expect_eq(out, base.stdout, f"{what}: stdout")
    # libomp itself warns ("OMP: Warning #179") when the file size limit stops its registration file.
    kc.check(all(l.startswith(("kokkos-ompt-bridge: ", "OMP: Warning #179")) for l in err.splitlines()),
             f"{what}: only tool lines on stderr: {err!r}")


def check_set(what, wd, prefix, pid):
    for ext in EXTS:
        kc.check(os.path.isfile(os.path.join(wd, prefix + ext)), f"{what}: {prefix}{ext} written")
    with open(os.path.join(wd, prefix + ".trace.json")) as f:
        doc = kc.json_load(f)
    kc.validate_trace(doc)
    kc.expect_eq(doc["otherData"]["pid"], pid, f"{what}: the trace is this process's")
    kc.expect_eq(len(kc.events(doc, "omp.parallel", "X")), 3, f"{what}: parallel regions")
    return doc


# Placeholders; %r is 0 with no rank known; %% is a percent sign.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=out-%h-%p-%r-%q{KOB_TEST_TAG}-%%", wd, {"KOB_TEST_TAG": "t1"})
check_run("placeholders", rc, out, err)
check_set("placeholders", wd, f"out-{host}-{pid}-0-t1-%", pid)
kc.expect_eq(tool_lines(err), [], "placeholders: no tool message")
kc.expect_eq(len(files(wd)), 4, "placeholders: three files and the raw trace, no temporary left")

# DIR/: the default names inside DIR, created with its parents.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=results/%h/", wd)
check_run("DIR/", rc, out, err)
check_set("DIR/", wd, f"results/{host}/kob-fork_omp-{pid}", pid)
kc.expect_eq(len(files(wd)), 4, "DIR/: three files and the raw trace")

# A directory that cannot be made (a file is in the way): the files go to the current folder under
# the default names, and one line says so, naming the directory, the cause and where they went.
wd = kc.workdir()
open(os.path.join(wd, "blocker"), "w").close()
pid, rc, out, err = run("--quiet --output=blocker/sub/", wd)
check_run("blocked DIR/", rc, out, err)
check_set("blocked DIR/", wd, f"kob-fork_omp-{pid}", pid)
kc.expect_eq(len(files(wd)), 5, f"blocked DIR/: the blocker, three files and the raw trace: {files(wd)}")
lines = tool_lines(err)
kc.expect_eq(len(lines), 1, f"blocked DIR/: one line: {lines}")
kc.check(lines and "blocker/sub/" in lines[0] and "Not a directory" in lines[0] and f"go to kob-fork_omp-{pid}.* instead" in lines[0],
         f"blocked DIR/: the line names the directory, the cause and where the files went: {lines}")

# The same for DIR/NAME, run where nothing can be written (/proc): the files go to $TMPDIR.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=nodir/run", "/proc", {"TMPDIR": wd})
check_run("nowhere but $TMPDIR", rc, out, err)
check_set("nowhere but $TMPDIR", wd, "run", pid)
lines = tool_lines(err)
kc.expect_eq(len(lines), 1, f"nowhere but $TMPDIR: one line: {lines}")
kc.check(lines and f"go to {wd}/run.* instead" in lines[0], f"nowhere but $TMPDIR: the line says where: {lines}")

# A prefix in a missing directory: the directory is made, the run written there, nothing said.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=missing/deeper/run", wd)
check_run("missing directory", rc, out, err)
check_set("missing directory", wd, "missing/deeper/run", pid)
kc.expect_eq(tool_lines(err), [], "missing directory: no line")

# A bad placeholder: one line naming it and what is accepted; the default names are used.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=run-%y", wd)
check_run("bad placeholder", rc, out, err)
lines = tool_lines(err)
kc.expect_eq(len(lines), 1, f"bad placeholder: one line: {lines}")
kc.check(lines and "'%y'" in lines[0] and "%q{VAR}" in lines[0], f"bad placeholder: names it and what is accepted: {lines}")
check_set("bad placeholder", wd, f"kob-fork_omp-{pid}", pid)

# A known rank: -r<rank> added (one line saying so) unless the prefix tells ranks apart.
for output, expected, note in (("run", "run-r2", True), ("run-%r", "run-2", False), ("run-%p", None, False),
                               ("run-%q{PMI_RANK}", "run-2", False), ("run-%h", f"run-{host}-r2", True)):
    wd = kc.workdir()
    pid, rc, out, err = run(f"--quiet --output={output}", wd, {"PMI_RANK": "2"})
    what = f"rank 2, --output={output}"
    check_run(what, rc, out, err)
    doc = check_set(what, wd, expected or f"run-{pid}", pid)
    kc.expect_eq(doc["otherData"].get("rank"), 2, f"{what}: rank in otherData")
    lines = tool_lines(err)
    kc.expect_eq(len(lines), 1 if note else 0, f"{what}: lines about the name: {lines}")
    if note:
        kc.check("rank 2" in lines[0] and (expected + ".*") in lines[0], f"{what}: the line names the rank and the files")

# Writes that fail part-way (file size limit): no partial file, no temporary, an older file of
# the same name left as it was, one line per failed file; the small summary still written.
wd = kc.workdir()
pid, rc, out, err = run("--quiet --output=full", wd)
sizes = {ext: os.path.getsize(os.path.join(wd, "full" + ext)) for ext in EXTS}
limit = sizes[".summary.txt"] + 1024  # room for the few bytes that timings change between runs
kc.check(sizes[".trace.json"] > limit and sizes[".summary.json"] > limit, f"the limit falls between the file sizes: {sizes}")
for ext in (".trace.json", ".summary.json"):
    with open(os.path.join(wd, "full" + ext), "w") as f:
        f.write("older")
os.remove(os.path.join(wd, "full.summary.txt"))
pid, rc, out, err = run("--quiet --output=full", wd, fsize=limit)
check_run("file size limit", rc, out, err)
lines = tool_lines(err)
kc.expect_eq(len(lines), 3, f"file size limit: one line per failed file (the raw trace too): {lines}")
kc.check(all("File too large" in l for l in lines), f"file size limit: the lines give the cause: {lines}")
kc.check(any("full.trace.json" in l for l in lines) and any("full.summary.json" in l for l in lines),
         f"file size limit: the lines name the files: {lines}")
# full.kob: the first run's raw trace, left as it was (this run's cannot even take its header).
kc.expect_eq(files(wd), ["full" + e for e in sorted(EXTS + (".kob",))], "file size limit: no temporary left")
for ext in (".trace.json", ".summary.json"):
    with open(os.path.join(wd, "full" + ext)) as f:
        kc.expect_eq(f.read(), "older", f"file size limit: full{ext} left as it was")
with open(os.path.join(wd, "full.summary.txt")) as f:
    kc.check(f.read().endswith("dropped events: 0\n"), "file size limit: the summary that fits is whole")
kc.check(" wrote " not in err, "file size limit: --quiet: no line naming the files written")

# Four processes writing the same prefix at once: each file whole (valid JSON), no temporary.
wd = kc.workdir()
procs = [start("--quiet --output=same", wd) for _ in range(4)]
for p in procs:
    out, err = p.communicate(timeout=120)
    check_run("concurrent writers", p.returncode, out, err)
kc.expect_eq(files(wd), ["same" + e for e in sorted(EXTS + (".kob",))], "concurrent writers: one set, no temporary left")
for ext in (".trace.json", ".summary.json"):
    with open(os.path.join(wd, "same" + ext)) as f:
        try:
            doc = kc.json_load(f)
            kc.check(doc["otherData"]["pid"] in {p.pid for p in procs}, f"concurrent writers: same{ext} is one writer's")
        except ValueError as e:
            kc.check(False, f"concurrent writers: same{ext} is valid JSON ({e})")
kc.finish()
