#!/usr/bin/env python3
"""An event's whole price, hook to file (issue 26): instructions per kernel of the whole process.

  pipeline_cost.py --builddir DIR [--kernels N] [--convert-kernels N] [--only run,convert,writer,pftrace,cores]
                   [--pftrace-kernels N] [--runs N] [--jobs LIST] [--out DIR]

  run      callgrind on the whole process (all threads, start to exit) of tiny_kernels_openmp N
           (Kokkos 3.4.1, OpenMP backend, OMP_NUM_THREADS=2 KMP_BLOCKTIME=0): the empty Kokkos
           tool + the empty OMPT tool, then this library with --format=none, summary,json and the
           default formats. Ir per kernel and over the empty tools.
  convert  callgrind on `kob convert` of a --convert-kernels raw trace of the same program, one
           row per --to (perfetto, summary, json, chrome, otf2, all): Ir per kernel.
  writer   the copy of full slots to the file wherever it runs (the writer thread, or a program
           thread copying its own slots): copy_thread inclusive over every thread's profile
           (callgrind --separate-threads=yes) of a --format=none run, per record and per kernel.
  pftrace  .pftrace bytes per trace event (TrackEvents, shared/tools/pftrace_count.py's count, or
           tests/integration/pftrace_decode.py's) of a --pftrace-kernels run's kob convert.
  cores    wall clock against CPU (user + sys) of `kob convert` (default formats) of a
           --pftrace-kernels raw trace, --runs interleaved runs per -j value (--jobs, default
           "default,2"), each into fresh file names (replacing a 400 MB file costs ext4 a flush in
           rename(2), wall time with no CPU): medians and ranges. Timing: run it on an idle machine.

DIR needs -Dbenchmarks=true (tiny_kernels_openmp, the empty tools). Instruction counts are exact
and repeatable here (no timing); the goals in the table are issue 26's. Prints markdown tables.
"""
import argparse
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def base_env():
    env = dict(os.environ)
    for k in ("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "LD_PRELOAD"):
        env.pop(k, None)
    env.update(OMP_NUM_THREADS="2", KMP_BLOCKTIME="0", OMP_PROC_BIND="false")
    return env


def tool_env(lib, args):
    return {**base_env(), "KOKKOS_PROFILE_LIBRARY": str(lib), "KOKKOS_TOOLS_LIBS": str(lib),
            "OMP_TOOL_LIBRARIES": str(lib), "KOB_ARGS": args}


def callgrind(cmd, env, out_prefix, separate_threads=False, program_output=None):
    """Runs cmd under callgrind; returns {thread file: total Ir}. program_output (a list), when
    given, receives what cmd printed on stdout."""
    for f in glob.glob(out_prefix + "*"):
        os.unlink(f)
    vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_prefix}.%p",
          f"--separate-threads={'yes' if separate_threads else 'no'}", "--compress-strings=no"]
    p = subprocess.run(vg + cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"pipeline_cost: {' '.join(cmd)} exited {p.returncode}: {p.stderr[-3000:]}")
    if program_output is not None:
        program_output.append(p.stdout)
    totals = {}
    for f in glob.glob(out_prefix + "*"):
        with open(f, errors="replace") as fh:
            for line in fh:
                if line.startswith("summary:") or line.startswith("totals:"):
                    totals[f] = int(line.split()[1])
                    break
    if not totals:
        sys.exit(f"pipeline_cost: no callgrind totals for {cmd}")
    return totals


def run_rows(a, out):
    prog = str(a.builddir / "benchmarks" / "tiny_kernels_openmp")
    empty_k = a.builddir / "benchmarks" / "libkob_empty_tool.so"
    empty_o = a.builddir / "benchmarks" / "libkob_empty_ompt_tool.so"
    n = a.kernels
    configs = [
        ("empty Kokkos tool + empty OMPT tool", {**base_env(), "KOKKOS_PROFILE_LIBRARY": str(empty_k),
                                                  "KOKKOS_TOOLS_LIBS": str(empty_k), "OMP_TOOL_LIBRARIES": str(empty_o)}, None),
        ("`--format=none` (hot path + writer thread)", tool_env(a.lib, f"--quiet --output={out}/run-none --format=none"), 1200),
        ("`--format=summary,json`", tool_env(a.lib, f"--quiet --output={out}/run-sum --format=summary,json"), 2500),
        ("default (`perfetto,summary,json`)", tool_env(a.lib, f"--quiet --output={out}/run-default"), 4500),
    ]
    print(f"\n### Whole process, `tiny_kernels_openmp {n}` (2 threads, KMP_BLOCKTIME=0), callgrind Ir per kernel, all threads\n")
    print("| configuration | Ir per kernel | over the empty tools | goal |")
    print("|---|---:|---:|---:|")
    base = None
    for label, env, goal in configs:
        total = sum(callgrind([prog, str(n)], env, f"{out}/cg-run").values())
        per = total / n
        if base is None:
            base = per
            print(f"| {label} | {per:,.0f} | – | |")
        else:
            d = per - base
            print(f"| {label} | {per:,.0f} | {d:+,.0f} | ≤ +{goal:,} {'met' if d <= goal else 'not met'} |")
        sys.stdout.flush()


def record_raw(a, out, n, name):
    prog = str(a.builddir / "benchmarks" / "tiny_kernels_openmp")
    prefix = f"{out}/{name}"
    p = subprocess.run([prog, str(n)], env=tool_env(a.lib, f"--quiet --output={prefix} --format=none"),
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"pipeline_cost: recording failed: {p.stderr[-2000:]}")
    return prefix + ".kob"


CONVERT_GOALS = {"chrome": 5000, "otf2": 5000, "all": 9000}


def convert_rows(a, out):
    n = a.convert_kernels
    raw = record_raw(a, out, n, "conv")
    print(f"\n### `kob convert` of a `tiny_kernels_openmp {n}` raw trace (2 threads), callgrind Ir per kernel, whole process\n")
    print("| `--to` | Ir per kernel | goal |")
    print("|---|---:|---:|")
    for to in ("perfetto", "summary", "json", "chrome", "otf2", "all"):
        total = sum(callgrind([str(a.kob), "convert", raw, f"--to={to}", f"--output={out}/conv-{to}", "--quiet"],
                              base_env(), f"{out}/cg-conv").values())
        goal = CONVERT_GOALS.get(to)
        g = f"≤ {goal:,} {'met' if total / n <= goal else 'not met'}" if goal else ""
        print(f"| {to} | {total / n:,.0f} | {g} |")
        sys.stdout.flush()


def raw_records(raw):
    """Records in a raw trace, as written (convert_stages' count)."""
    stages = a_builddir / "benchmarks" / "convert_stages"
    p = subprocess.run([str(stages), raw, raw + ".stages", "decode"], capture_output=True, text=True)
    m = re.search(r"^records (\d+)", p.stdout, re.M)
    if not m:
        sys.exit(f"pipeline_cost: convert_stages printed no record count: {p.stderr[-500:]}")
    return int(m.group(1))


def track_events(path):
    """TrackEvents in a .pftrace: the packets (Trace field 1) holding field 11."""
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from pftrace_decode import fields
    data = open(path, "rb").read()
    n = 0
    for f, w, pkt in fields(data):
        if f == 1 and w == 2:
            for g, _, _ in fields(pkt):
                if g == 11:
                    n += 1
                    break
    return n


def inclusive_ir(profile, function):
    """The inclusive Ir of `function` (a demangled name's start) in one callgrind profile, 0 if absent."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", profile], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if function in line:
            return int(line.split()[0].replace(",", ""))
    return 0


def writer_rows(a, out):
    """The copy of full ring slots to the file, wherever it runs: the writer thread, or a program
    thread that copies its own slots when the writer (in the idle class) has had no core. Summed
    over every thread's profile: copy_thread inclusive (encoding, zeroing, the write) per record."""
    n = a.kernels
    prog = str(a.builddir / "benchmarks" / "tiny_kernels_openmp")
    prefix = f"{out}/writer"
    totals = callgrind([prog, str(n)], tool_env(a.lib, f"--quiet --output={prefix} --format=none"),
                       f"{out}/cg-writer", separate_threads=True)
    copy = sum(inclusive_ir(f, "kob::raw::writer::copy_thread(") for f in totals)
    encode = sum(inclusive_ir(f, "kob::codec::encode(") for f in totals)
    writer = sum(ir for f, ir in totals.items() if inclusive_ir(f, "kob::raw::writer::(anonymous namespace)::loop(") > 0)
    records = raw_records(prefix + ".kob")
    print(f"\n### The copy to the file, `tiny_kernels_openmp {n}` `--format=none` (callgrind --separate-threads=yes)\n")
    print("| | Ir | per record | per kernel | goal |")
    print("|---|---:|---:|---:|---:|")
    per = copy / max(records, 1)
    print(f"| copy_thread, all threads ({records:,} records) | {copy:,} | {per:.1f} | {copy / n:,.0f} | ≤ 60 per record "
          f"{'met' if per <= 60 else 'not met'} |")
    print(f"| of which codec::encode | {encode:,} | {encode / max(records, 1):.1f} | {encode / n:,.0f} | |")
    print(f"| the writer thread itself (whole thread) | {writer:,} | {writer / max(records, 1):.1f} | {writer / n:,.0f} | |")
    # The same program run without valgrind, its records coded again under callgrind
    # (benchmarks/codec_cost): a run under valgrind records time steps ~50x longer than it takes
    # natively, so its varints (tick and the folded sync steps) are longer than a native run's.
    native = f"{out}/writer-native"
    p = subprocess.run([prog, str(n)], env=tool_env(a.lib, f"--quiet --output={native} --format=none"),
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"pipeline_cost: {prog} {n} exited {p.returncode}: {p.stderr[-3000:]}")
    cost = str(a.builddir / "benchmarks" / "codec_cost")
    printed = []
    totals = callgrind([cost, native + ".kob"], base_env(), f"{out}/cg-codec", program_output=printed)
    coded = printed[0].split()
    nrec = int(coded[coded.index("records") + 1])
    nbytes = int(coded[coded.index("bytes") + 1])
    encode = sum(inclusive_ir(f, "kob::codec::encode(") for f in totals)
    per = encode / max(nrec, 1)
    print(f"| codec::encode of a native run's records ({nrec:,}, {nbytes / max(nrec, 1):.2f} bytes each; benchmarks/codec_cost) "
          f"| {encode:,} | {per:.1f} | {encode / n:,.0f} | ≤ 60 per record {'met' if per <= 60 else 'not met'} |")


def pftrace_rows(a, out):
    n = a.pftrace_kernels
    raw = record_raw(a, out, n, "pf")
    subprocess.run([str(a.kob), "convert", raw, "--to=perfetto", f"--output={out}/pf", "--quiet"], check=True)
    path = f"{out}/pf.pftrace"
    size = os.path.getsize(path)
    events = track_events(path)
    print(f"\n### `.pftrace` of a `tiny_kernels_openmp {n}` run (kob convert --to=perfetto)\n")
    print("| bytes | trace events | bytes per event | goal |")
    print("|---:|---:|---:|---:|")
    per = size / events
    print(f"| {size:,} | {events:,} | {per:.1f} | ≤ 24 {'met' if per <= 24 else 'not met'} |")


def cores_rows(a, out):
    import statistics
    import time
    n = a.pftrace_kernels
    raw = f"{out}/pf.kob"
    if not os.path.exists(raw):
        raw = record_raw(a, out, n, "pf")
    jobs = a.jobs.split(",")
    times = {j: [] for j in jobs}
    for _ in range(a.runs):
        for j in jobs:
            prefix = f"{out}/cores-{j}"
            for f in glob.glob(prefix + ".*"):
                os.unlink(f)
            extra = [] if j == "default" else ["-j", j]
            t0 = time.monotonic()
            before = os.times()
            subprocess.run([str(a.kob), "convert", raw, f"--output={prefix}", "--quiet", *extra], check=True)
            after = os.times()
            wall = time.monotonic() - t0
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            times[j].append((wall, cpu))
    for f in glob.glob(f"{out}/cores-*"):
        os.unlink(f)
    print(f"\n### `kob convert` of a `tiny_kernels_openmp {n}` raw trace, default formats: wall / CPU, {a.runs} interleaved runs, fresh file names\n")
    print("| -j | wall (median, range) | CPU user + sys (median) | wall / CPU (median, range) | goal |")
    print("|---|---:|---:|---:|---:|")
    for j, r in times.items():
        ratios = [w / c for w, c in r]
        med = statistics.median(ratios)
        print(f"| {j} | {statistics.median(w for w, _ in r):.2f} s ({min(w for w, _ in r):.2f}-{max(w for w, _ in r):.2f}) | "
              f"{statistics.median(c for _, c in r):.2f} s | {med:.3f} ({min(ratios):.3f}-{max(ratios):.3f}) | "
              f"≤ 0.6 {'met' if med <= 0.6 else 'not met'} |")


a_builddir = None


def main():
    global a_builddir
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", type=pathlib.Path, default=ROOT / "build-bench")
    ap.add_argument("--kernels", type=int, default=20000)
    ap.add_argument("--convert-kernels", type=int, default=10000)
    ap.add_argument("--pftrace-kernels", type=int, default=1000000)
    ap.add_argument("--only", default="run,convert,writer,pftrace")
    ap.add_argument("--runs", type=int, default=15, help="cores: interleaved runs per -j value")
    ap.add_argument("--jobs", default="default,2", help="cores: the -j values, comma separated (default: none given)")
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    a.builddir = a.builddir.resolve()
    a_builddir = a.builddir
    a.lib = a.builddir / "src" / "libkokkos_ompt_bridge.so"
    a.kob = a.builddir / "src" / "kob"
    for need in (a.lib, a.kob, a.builddir / "benchmarks" / "tiny_kernels_openmp"):
        if not need.exists():
            sys.exit(f"pipeline_cost: {need} is missing (configure {a.builddir} with -Dbenchmarks=true and build it)")
    out = a.out or pathlib.Path(tempfile.mkdtemp(prefix="kob-pipeline-"))
    out.mkdir(parents=True, exist_ok=True)
    only = set(a.only.split(","))
    for name, rows in (("run", run_rows), ("convert", convert_rows), ("writer", writer_rows), ("pftrace", pftrace_rows),
                       ("cores", cores_rows)):
        if name in only:
            rows(a, out)
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)  # its own temporary folder (a 10^6-kernel trace is 56 MB): --out keeps it


if __name__ == "__main__":
    main()
