#!/usr/bin/env python3
"""Soak (issue 20, item 4): runs the samples with the library N times, each run drawn at random
from a seeded generator (the seed is printed; --seed repeats a run set):
- the program: kokkos_sample (OpenMP backend, --repeat=1..8, three "iter" lines per repeat, each
  flushed after its iteration's kernels and fence) or openmp_sample (plain OpenMP, OMPT route only);
- OMP_NUM_THREADS 1-8, --events (all, or a random set of groups), --format (a random set, or
  none), --memory-limit (1 to 64 MiB, or the default);
- an end: none, or SIGTERM, SIGINT, SIGHUP or SIGKILL sent after a random number of "iter" lines
  (0: a random moment in the first 30 ms, Kokkos and the tool possibly still starting), or a
  SIGSEGV from the sample's crash mode (--crash-after=N).
Each run is checked:
- no hang (a time limit; the process group is then killed);
- the end as without the tool: exit 0 with the program's exact output, or the signal sent (exit 0
  only where the program had printed all its output before the signal could reach it);
- no file descriptor left open: an LD_PRELOAD helper (tests/integration/fd_audit.cpp) lists
  /proc/self/fd when the process starts and again after the tool's exit write;
- outputs: where the process ended by exit or a signal the tool handles (TERM, INT, HUP), every
  requested file is there and valid (JSON parsed, the .pftrace decoded by the tests' own decoder
  with Perfetto's rules, OTF2 anchor file and HTML end present); after any end, `kob convert` of the
  raw trace succeeds and its trace holds every kernel that completed before the signal (each
  "iter" line read means its iteration's local_update and assemble_dot had ended), when the
  Kokkos events were recorded.
The last line: runs, hangs, wrong ends, fd leaks, bad outputs, lost kernels; exit status 1 if any.
  benchmarks/soak.py --builddir build --runs 1000
  benchmarks/soak.py --builddir build --seed S --replay K --runs 1000   (run K of seed S's set, 1000 times)
"""
import argparse
import concurrent.futures
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import pftrace_decode  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
ap.add_argument("--lib"), ap.add_argument("--kob"), ap.add_argument("--fd-audit")
ap.add_argument("--kokkos-sample"), ap.add_argument("--openmp-sample")
ap.add_argument("--runs", type=int, default=1000)
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take before it counts as a hang")
ap.add_argument("--keep", action="store_true", help="keep every run's files, not only a failed run's")
ap.add_argument("--replay", type=int, default=None, metavar="K",
                help="run K of the seed's set, --runs times over (a schedule seen to fail once)")
args = ap.parse_args()
b = os.path.abspath(args.builddir)
LIB = os.path.abspath(args.lib or os.path.join(b, "src", "libkokkos_ompt_bridge.so"))
KOB = os.path.abspath(args.kob or os.path.join(b, "src", "kob"))
FD_AUDIT = os.path.abspath(args.fd_audit or os.path.join(b, "tests", "integration", "libfd_audit.so"))
PROGRAMS = {"kokkos_sample": os.path.abspath(args.kokkos_sample or os.path.join(b, "samples", "kokkos_sample")),
            "openmp_sample": os.path.abspath(args.openmp_sample or os.path.join(b, "samples", "openmp_sample"))}
PROGRAMS = {k: v for k, v in PROGRAMS.items() if os.path.exists(v)}
for what, path in (("library", LIB), ("kob", KOB), ("fd audit helper", FD_AUDIT)):
    if not os.path.exists(path):
        sys.exit(f"soak: no {what} at {path} (build first: scripts/build.sh)")
if not PROGRAMS:
    sys.exit("soak: no sample program found")

seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
print(f"seed {seed} (repeat with --seed={seed})", flush=True)
rng = random.Random(seed)
work = tempfile.mkdtemp(prefix="kob-soak-")

GROUPS = ["kokkos", "omp-parallel", "omp-work", "omp-sync", "omp-task", "omp-mutex", "omp-target", "omp-device"]
FORMATS = {"perfetto": ".pftrace", "chrome": ".trace.json", "summary": ".summary.txt", "json": ".summary.json",
           "otf2": ".otf2", "html": ".html"}
SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT, "HUP": signal.SIGHUP, "KILL": signal.SIGKILL}
HANDLED = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}  # the tool writes its files, then ends as the signal would
LATE = "signal after the program's end"
EARLY = "signal before the tool's handlers"
KOKKOS_LINES = ["iter 0 dot = 311248", "iter 1 dot = 524202", "iter 2 dot = 737156", "scan total = 1366",
                "checksum = 57195", "dual sum = 768"]


def draw(i):
    """One run's configuration."""
    names = sorted(PROGRAMS)
    name = rng.choices(names, weights=[3 if n == "kokkos_sample" else 1 for n in names])[0]
    c = {"index": i, "program": name, "threads": rng.randint(1, 8), "repeat": rng.randint(1, 8) if name == "kokkos_sample" else 1}
    c["events"] = None if rng.random() < 0.4 else sorted(rng.sample(GROUPS, rng.randint(1, len(GROUPS))))
    c["formats"] = ["none"] if rng.random() < 0.1 else sorted(rng.sample(sorted(FORMATS), rng.randint(1, len(FORMATS))))
    c["memory_limit"] = rng.choice([None, 1, 2, 4, 8, 16, 64])
    ends = ["none", "TERM", "INT", "HUP", "KILL"] + (["SEGV"] if name == "kokkos_sample" else [])
    c["end"] = rng.choice(ends)
    lines = 3 * c["repeat"]
    c["after_lines"] = rng.randint(1, lines) if c["end"] == "SEGV" else rng.randint(0, lines)
    c["delay_ms"] = rng.uniform(0, 30) if c["after_lines"] == 0 else rng.uniform(0, 3)
    if name == "openmp_sample":
        c["after_lines"] = 0
        c["delay_ms"] = rng.uniform(0, 150)
    return c


def tool_args(c, prefix):
    a = [f"--output={prefix}", "--quiet", f"--format={','.join(c['formats'])}"]
    if c["events"]:
        a.append(f"--events={','.join(c['events'])}")
    if c["memory_limit"]:
        a.append(f"--memory-limit={c['memory_limit']}")
    return " ".join(a)


def run_one(c):
    """Runs c's program to its end and checks it: (c, [problems], facts)."""
    d = os.path.join(work, f"run{c['index']}")
    os.makedirs(d)
    prefix = os.path.join(d, "out")
    audit = os.path.join(d, "fd_audit.txt")
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(c["threads"]), "OMP_PROC_BIND": "false", "KOB_ARGS": tool_args(c, prefix),
                "OMP_TOOL_LIBRARIES": LIB, "KOB_FD_AUDIT": audit,
                "LD_PRELOAD": ":".join([FD_AUDIT] + [p for p in env.get("LD_PRELOAD", "").split(":") if p])})
    cmd = [PROGRAMS[c["program"]]]
    if c["program"] == "kokkos_sample":
        env["KOKKOS_PROFILE_LIBRARY"] = LIB
        cmd += [f"--repeat={c['repeat']}"] + ([f"--crash-after={c['after_lines']}"] if c["end"] == "SEGV" else [])
    with open(os.path.join(d, "stderr"), "w+") as err:
        p = subprocess.Popen(cmd, env=env, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                             start_new_session=True)
        started = time.monotonic()
        deadline = started + args.timeout
        out, lines, sent, hung = b"", 0, None, False
        sig = SIGNALS.get(c["end"])
        fd = p.stdout.fileno()
        ready_at = None  # when the lines the signal waits for had been read
        while True:
            now = time.monotonic()
            if now > deadline:
                hung = True
                break
            ready, _, _ = select.select([fd], [], [], 0.001)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                out += chunk
                lines = out.count(b"\n")
            if sig is not None and sent is None and lines >= c["after_lines"]:
                ready_at = ready_at or now
                if now >= ready_at + c["delay_ms"] / 1000:
                    sent = p.poll() is None
                    if sent:
                        os.kill(p.pid, sig)
        if hung:
            os.killpg(p.pid, signal.SIGKILL)
        status = p.wait()
        p.stdout.close()
        err.seek(0)
        stderr = err.read()
    text = out.decode("utf-8", "replace").splitlines()
    problems = []
    if hung:
        problems.append(f"hang: still running after {args.timeout:.0f} s")
        return c, problems, {"hang": 1}
    # ---- the end, as without the tool ----
    expected_out = KOKKOS_LINES * c["repeat"] if c["program"] == "kokkos_sample" else None
    complete = (text == expected_out) if expected_out is not None else (text[-1:] == ["done"])
    facts = Counter()
    if c["end"] == "SEGV":
        if status != -signal.SIGSEGV:
            problems.append(f"end: expected SIGSEGV, got status {status}")
        facts["ended by SEGV"] += 1
    elif sig is not None and sent:
        if status == -sig:
            facts[f"ended by {c['end']}"] += 1
        elif status == 0 and complete:
            facts[LATE] += 1  # sent to a process already on its way out
        else:
            problems.append(f"end: expected {c['end']} (or exit 0 after the whole output), got status {status}")
    else:
        if sig is not None:
            facts[LATE] += 1
        else:
            facts["exit"] += 1
        if status != 0:
            problems.append(f"end: expected exit 0, got status {status}")
    if status == 0 and not complete:
        problems.append(f"output: not the program's own ({text[-3:]})")
    # Lines printed before an end by signal are the program's own, in order.
    if expected_out is not None and text != expected_out[:len(text)]:
        problems.append(f"output: lines that are not the program's own ({text[:3]})")
    # ---- file descriptors ----
    if status == 0:
        try:
            with open(audit) as f:
                audit_lines = f.read().splitlines()
            extra = [l for l in audit_lines if l.startswith("extra ")]
            if extra:
                problems.append(f"fds: left open at exit: {extra[:3]}")
            facts["fd audits"] += 1
        except OSError:
            problems.append("fds: the audit helper wrote nothing (the process did not end through exit?)")
    # ---- outputs ----
    ended_by = -status if status < 0 else 0
    tool_started = os.path.exists(prefix + ".kob")
    wanted = [f for f in c["formats"] if f != "none"]
    present = [f for f in wanted if os.path.exists(prefix + FORMATS[f])]
    if ended_by in HANDLED and not present and lines == 0:
        # The signal came while Kokkos or the tool were still starting, before the handlers were
        # in place (the program had printed nothing): it ended the process as without the tool.
        facts[EARLY] += 1
    elif status == 0 or (ended_by in HANDLED and tool_started):
        for fmt in wanted:
            path = prefix + FORMATS[fmt]
            if fmt not in present:
                problems.append(f"outputs: no {os.path.basename(path)} (status {status})")
                continue
            try:
                if fmt in ("chrome", "json"):
                    with open(path) as f:
                        json.load(f)
                elif fmt == "perfetto":
                    bad = pftrace_decode.rule_problems(pftrace_decode.Trace(path))
                    if bad:
                        problems.append(f"outputs: {len(bad)} broken Perfetto rules, e.g. {bad[:2]}")
                elif fmt == "otf2":
                    if not os.path.exists(os.path.join(path, "traces.otf2")):
                        problems.append("outputs: the OTF2 archive has no traces.otf2 anchor file")
                elif fmt == "html":
                    with open(path, errors="replace") as f:
                        if "</html>" not in f.read():
                            problems.append("outputs: the HTML report has no end")
            except Exception as e:  # noqa: BLE001 (any decoding failure is the finding)
                problems.append(f"outputs: {os.path.basename(path)} invalid: {e}")
        leftovers = [n for n in os.listdir(d) if ".tmp" in n]
        if leftovers:
            problems.append(f"outputs: temporary files left: {leftovers}")
        facts["outputs checked"] += 1
    # ---- recovery: kob convert of the raw trace, every completed kernel in it ----
    if not tool_started:
        if lines > 0:
            problems.append("recovery: no raw trace, though kernels had completed")
        facts["ended before the tool started"] += 1
    else:
        rec = os.path.join(d, "recovered")
        r = subprocess.run([KOB, "convert", prefix + ".kob", f"--output={rec}", "--to=chrome", "--quiet"],
                           capture_output=True, text=True, timeout=args.timeout)
        if r.returncode != 0:
            problems.append(f"recovery: kob convert exit {r.returncode}: {r.stderr.strip()[-300:]}")
        elif c["program"] == "kokkos_sample" and (c["events"] is None or "kokkos" in c["events"]):
            try:
                with open(rec + ".trace.json") as f:
                    names = Counter(e["name"] for e in json.load(f)["traceEvents"]
                                    if e.get("cat") == "kokkos.kernel" and e.get("ph") == "X" and not (e.get("args") or {}).get("cut"))
                done = sum(1 for l in text if l.startswith("iter "))
                for k in ("local_update", "assemble_dot"):
                    if names[k] < done:
                        problems.append(f"lost kernels: {done - names[k]} {k} of the {done} completed before the end")
                        facts["lost kernels"] += done - names[k]
                facts["kernels checked"] += 2 * done
            except (OSError, ValueError, KeyError) as e:
                problems.append(f"recovery: the converted trace is invalid: {e}")
    return c, problems, facts


def describe(c):
    return (f"run {c['index']}: {c['program']} threads={c['threads']} repeat={c['repeat']} events={c['events'] or 'all'} "
            f"format={','.join(c['formats'])} memory-limit={c['memory_limit'] or 'default'} end={c['end']} "
            f"after {c['after_lines']} lines +{c['delay_ms']:.1f} ms")


if args.replay is None:
    configs = [draw(i) for i in range(args.runs)]
else:
    for i in range(args.replay):
        draw(i)
    one = draw(args.replay)
    configs = [dict(one, index=i) for i in range(args.runs)]
    print(f"replaying {describe(one)}", flush=True)
started = time.monotonic()
totals, failed = Counter(), []
with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    for c, problems, facts in pool.map(run_one, configs):
        totals.update(facts)
        kinds = {p.split(":")[0] for p in problems}
        for k in kinds:
            totals["failed: " + k] += 1
        if problems:
            failed.append(c["index"])
            print(f"FAIL {describe(c)}: {'; '.join(problems)} (files in {work}/run{c['index']})", flush=True)
        elif not args.keep:
            shutil.rmtree(os.path.join(work, f"run{c['index']}"), ignore_errors=True)

ends = Counter(c["end"] for c in configs)
print(f"{args.runs} runs in {time.monotonic() - started:.0f} s (ends drawn: {dict(sorted(ends.items()))}): "
      f"hangs {totals['failed: hang']}, wrong ends {totals['failed: end'] + totals['failed: output']}, "
      f"fd leaks {totals['failed: fds']}, bad outputs {totals['failed: outputs'] + totals['failed: recovery']}, "
      f"lost kernels {totals['lost kernels']}; {totals['kernels checked']} completed kernels checked, "
      f"{totals['fd audits']} fd audits, {totals['outputs checked']} output sets checked, "
      f"{totals['ended before the tool started']} ended before the tool started, "
      f"{totals[EARLY]} signals before its handlers, "
      f"{totals[LATE]} signals after the program's end", flush=True)
if failed:
    print(f"seed {seed}: {len(failed)} runs failed; their files are in {work}")
    sys.exit(1)
if not args.keep:
    shutil.rmtree(work, ignore_errors=True)
