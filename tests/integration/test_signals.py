"""A Kokkos + OpenMP program that runs N kernels and is then ended by a signal, a crash, _exit or
SIGKILL. Each run is compared with the same program without the tool: same exit status (-15 for
SIGTERM...), same stdout. --part signals: SIGTERM/SIGINT/SIGHUP write the usual files with every
kernel in them, also when the program has its own handler (installed before the tool: chained;
after it: it replaces ours), ignores the signal, or the signal ends a forked child. --part crashes:
segfault, abort(), an uncaught exception print one line naming `kob convert PREFIX.kob`; _exit and
SIGKILL print nothing; a stack overflow, on the main thread or on an OpenMP worker, prints the line too
(alternate signal stacks). --part recover: `kob convert PREFIX.kob` finds every kernel after each of
these ends (skipped while the `kob` executable is not built). Every run has a time limit."""
import argparse
import glob
import os
import queue
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--part", choices=["signals", "crashes", "recover"], required=True)
ap.add_argument("--kob", help="the kob executable (default: looked for beside the library)")
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)
N = 7  # victim_kernel launches; Kokkos adds its own (View initialisation)
T = 2
TIMEOUT = 60
SKIP = 77  # meson: skipped
TOOL_VARS = ("KOKKOS_PROFILE_LIBRARY", "OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOB_ARGS")
CRASH_SIGNAL = {"segv": "SIGSEGV", "overflow": "SIGSEGV", "overflow-worker": "SIGSEGV", "abort": "SIGABRT", "throw": "SIGABRT"}


def no_core_dump():
    """In the child before exec: no core files, and the signals under test at their default
    action, whatever this test inherited (under `nohup` SIGHUP is ignored, and an ignored
    signal stays ignored across exec)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def run(args, route=None, prefix=None, ready="ran ", send=(), to_child=False, asan_extra="", kob_args="", report=None):
    """Runs the victim (with the tool through `route`, or without it); once stdout shows the line
    starting with `ready`, sends the signals in `send` to it (or to the child whose pid the line
    names). Returns (rc, stdout, stderr); rc None when it hung (the group is then killed)."""
    env = {"OMP_NUM_THREADS": str(T)}
    if route:
        env.update({"KOKKOS_PROFILE_LIBRARY": lib, route: lib, "KOB_ARGS": f"--quiet --output={prefix} {kc.CHROME} {kob_args}"})
        if report:
            env["KOB_RUN_REPORT"] = report  # each write of the files appends a line (--quiet prints none)
    env = kc.program_env(env, unset=[v for v in TOOL_VARS if v not in env])
    if asan_extra and "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":" + asan_extra
    with tempfile.TemporaryFile(mode="w+") as err_file:
        p = subprocess.Popen([prog] + [str(x) for x in args], env=env, stdout=subprocess.PIPE, stderr=err_file,
                             text=True, start_new_session=True, preexec_fn=no_core_dump,
                             cwd=os.path.dirname(prefix) if prefix else None)
        lines, q = [], queue.Queue()

        def reader():
            for line in p.stdout:
                lines.append(line)
                q.put(line)
            q.put(None)

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        rc = None
        try:
            if send:
                while True:
                    line = q.get(timeout=TIMEOUT)
                    if line is None or line.startswith(ready):
                        break
                target = int(line.split()[1]) if to_child and line else p.pid
                for sig in send:
                    os.kill(target, sig)
            rc = p.wait(timeout=TIMEOUT)
        except (queue.Empty, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        th.join(TIMEOUT)
        err_file.seek(0)
        err = err_file.read()
    kc.check_no_sanitizer_report(err, prog)
    out = re.sub(r"child \d+ waiting", "child PID waiting", "".join(lines))
    return rc, out, err


def kernel_names(trace):
    return Counter(k["name"] for k in kc.events(trace, "kokkos.kernel", "X"))


def crash_lines(err):
    return [l for l in err.splitlines() if l.startswith("kob: ")]


def clean_kernels():
    """Kernel names and counts of a run with the tool that ends normally."""
    prefix = os.path.join(kc.workdir(), "clean")
    rc, _, err = run(["exit", "none", N], "OMP_TOOL_LIBRARIES", prefix)
    kc.expect_eq(rc, 0, "clean run exit code")
    trace, _ = kc.load_outputs(prefix)
    names = kernel_names(trace)
    kc.expect_eq(names["victim_kernel"], N, "clean run: every victim_kernel")
    return names


def check_files(prefix, what, expected_kernels):
    """The usual files at prefix, valid, with every kernel of a clean run."""
    for ext in (".trace.json", ".summary.txt", ".summary.json"):
        if not kc.check(os.path.exists(prefix + ext), f"{what}: {os.path.basename(prefix)}{ext} written"):
            return
    trace, summary = kc.load_outputs(prefix)
    kc.validate_trace(trace)
    kc.expect_eq(kernel_names(trace), expected_kernels, f"{what}: kernels in the trace (as in a clean run)")
    calls = {k["name"]: k["calls"] for k in summary["kernels"]}
    kc.expect_eq(calls.get("victim_kernel"), N, f"{what}: victim_kernel calls in summary.json")


def signals_part():
    expected = clean_kernels()
    TERM, INT, HUP = signal.SIGTERM, signal.SIGINT, signal.SIGHUP
    # (what, args, signals sent once ready, to the forked child, route, files expected)
    cases = [(f"default {signal.Signals(s).name}", ["wait", "none", N], [s], False, "OMP_TOOL_LIBRARIES")
             for s in (TERM, INT, HUP)]
    cases += [
        ("default SIGTERM, LD_PRELOAD", ["wait", "none", N], [TERM], False, "LD_PRELOAD"),
        # The program's handler comes first (installed before Kokkos::initialize loads the tool).
        ("handler before the tool calls _exit(3)", ["wait", "before-exit3", N], [TERM], False, "OMP_TOOL_LIBRARIES"),
        ("SA_SIGINFO|SA_RESETHAND handler before the tool", ["wait", "before-siginfo-resethand", N], [INT], False,
         "OMP_TOOL_LIBRARIES"),
        ("handler before the tool sets a flag, program returns 4", ["wait", "before-flag", N], [HUP], False,
         "OMP_TOOL_LIBRARIES"),
        # Installed after the tool: ours is replaced; the program's own exit writes the files.
        ("handler after the tool sets a flag, program returns 4", ["wait", "after-flag", N], [TERM], False,
         "OMP_TOOL_LIBRARIES"),
        ("SIGHUP ignored by the program, then SIGTERM", ["wait", "ignore-hup", N], [HUP, TERM], False,
         "OMP_TOOL_LIBRARIES"),
        # The child has no watcher thread: default action at once; the parent goes on and exits.
        ("SIGTERM to a forked child", ["fork-wait", "none", N], [TERM], True, "OMP_TOOL_LIBRARIES"),
    ]
    for what, args, send, to_child, route in cases:
        ready = "child " if to_child else "ran "
        base_rc, base_out, _ = run(args, ready=ready, send=send, to_child=to_child)
        if not kc.check(base_rc is not None, f"{what}: the program without the tool ends (no hang)"):
            continue
        wd = kc.workdir()
        prefix = os.path.join(wd, "out")
        report = kc.written_report()
        rc, out, err = run(args, route, prefix, ready=ready, send=send, to_child=to_child, report=report)
        if not kc.check(rc is not None, f"{what}: no hang with the tool (stderr: {err[-800:]!r})"):
            continue
        kc.expect_eq(rc, base_rc, f"{what}: exit status as without the tool")
        kc.expect_eq(out, base_out, f"{what}: stdout as without the tool")
        kc.expect_eq(len(kc.written(report)), 1, f"{what}: files written once")
        kc.expect_eq(crash_lines(err), [], f"{what}: no crash line")
        check_files(prefix, what, expected)
        kc.expect_eq(len(glob.glob(os.path.join(wd, "*.trace.json"))), 1, f"{what}: one set of files (none from a child)")
    # What the cases above rely on, seen without the tool.
    kc.expect_eq(run(["wait", "none", N], send=[TERM])[0], -TERM, "SIGTERM ends the program by default")
    kc.expect_eq(run(["wait", "before-exit3", N], send=[TERM])[0], 3, "the program's handler exits 3")


def expected_crash_line(sig_name, prefix, err):
    """The one line a crash prints, whichever `kob` command it found beside the library."""
    raw = prefix + ".kob"
    lines = crash_lines(err)
    if not kc.expect_eq(len(lines), 1, f"{sig_name}: one crash line (stderr: {err[-600:]!r})"):
        return
    m = re.fullmatch(re.escape(f"kob: the program ended with {sig_name}; its events are in {raw}: run '") +
                     r"(\S+) convert " + re.escape(raw + "'"), lines[0])
    if kc.check(m is not None, f"{sig_name}: crash line {lines[0]!r}"):
        cmd = m.group(1)
        kc.check(cmd == "kob" or (os.path.isabs(cmd) and os.access(cmd, os.X_OK)),
                 f"the command is `kob` or the absolute path of an executable: {cmd}")


def crashes_part():
    cases = [("segv", ["segv", "none", N], ()), ("overflow", ["overflow", "none", N], ()),
             ("overflow-worker", ["overflow-worker", "none", N], ()), ("abort", ["abort", "none", N], ()), ("throw", ["throw", "none", N], ()),
             ("_exit", ["_exit", "none", N], ()), ("SIGKILL", ["wait", "none", N], (signal.SIGKILL,))]
    for what, args, send in cases:
        # ASan's own SEGV handler would report the planted fault as a finding, with or without us.
        asan = "handle_segv=0" if what in ("segv", "overflow", "overflow-worker") else ""
        base_rc, base_out, base_err = run(args, send=send, asan_extra=asan)
        if not kc.check(base_rc is not None, f"{what}: the program without the tool ends"):
            continue
        wd = kc.workdir()
        prefix = os.path.join(wd, "out")
        rc, out, err = run(args, "OMP_TOOL_LIBRARIES", prefix, send=send, asan_extra=asan)
        if not kc.check(rc is not None, f"{what}: no hang with the tool (stderr: {err[-800:]!r})"):
            continue
        kc.expect_eq(rc, base_rc, f"{what}: exit status as without the tool")
        kc.expect_eq(out, base_out, f"{what}: stdout as without the tool")
        if what in CRASH_SIGNAL:
            expected_crash_line(CRASH_SIGNAL[what], prefix, err)
            kc.expect_eq(err.replace(crash_lines(err)[0] + "\n", "") if crash_lines(err) else err, base_err,
                         f"{what}: stderr is the program's plus the crash line")
        else:
            kc.expect_eq(crash_lines(err), [], f"{what}: nothing printed (nothing can run)")
    # --log-level=off: not even the crash line.
    base_rc, _, base_err = run(["abort", "none", N])
    rc, _, err = run(["abort", "none", N], "OMP_TOOL_LIBRARIES", os.path.join(kc.workdir(), "out"), kob_args="--log-level=off")
    kc.expect_eq((rc, err), (base_rc, base_err), "abort under --log-level=off: exit status and stderr as without the tool")
    expected = {"segv": -signal.SIGSEGV, "overflow": -signal.SIGSEGV, "overflow-worker": -signal.SIGSEGV, "abort": -signal.SIGABRT, "throw": -signal.SIGABRT, "_exit": 5,
                "SIGKILL": -signal.SIGKILL}
    for what, args, send in cases:
        asan = "handle_segv=0" if what in ("segv", "overflow", "overflow-worker") else ""
        kc.expect_eq(run(args, send=send, asan_extra=asan)[0], expected[what], f"{what}: the planted end, without the tool")


def find_kob():
    if a.kob:
        return os.path.abspath(a.kob)
    d = os.path.dirname(lib)
    for rel in ("kob", "kob/kob", "../bin/kob"):
        p = os.path.normpath(os.path.join(d, rel))
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def recover_part():
    kob = find_kob()
    if kob is None:
        print(f"SKIP: no `kob` executable beside {lib} (not built yet): cannot convert the raw traces")
        sys.exit(SKIP)
    expected = clean_kernels()
    cases = [("segv", ["segv", "none", N], ()), ("abort", ["abort", "none", N], ()),
             ("throw", ["throw", "none", N], ()), ("_exit", ["_exit", "none", N], ())]
    cases += [(signal.Signals(s).name, ["wait", "none", N], (s,))
              for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP)]
    for what, args, send in cases:
        wd = kc.workdir()
        prefix = os.path.join(wd, "out")
        rc, _, err = run(args, "OMP_TOOL_LIBRARIES", prefix, send=send,
                         asan_extra="handle_segv=0" if what == "segv" else "")
        if not kc.check(rc is not None, f"{what}: no hang"):
            continue
        if what == cases[0][0] and not os.path.exists(prefix + ".kob"):
            print("SKIP: the library wrote no raw trace (its recording side is not in this build)")
            sys.exit(SKIP)
        if not kc.check(os.path.exists(prefix + ".kob"), f"{what}: the raw trace {prefix}.kob is there"):
            continue
        conv = os.path.join(wd, "conv")
        crc, cout, cerr = kc.run([kob, "convert", prefix + ".kob", "--to=chrome,summary,json", f"--output={conv}"])
        if not kc.expect_eq(crc, 0, f"{what}: kob convert exit code (stderr: {cerr[-600:]!r})"):
            continue
        check_files(conv, f"{what}, after kob convert", expected)


{"signals": signals_part, "crashes": crashes_part, "recover": recover_part}[a.part]()
kc.finish()
