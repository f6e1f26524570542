#!/usr/bin/env python3
"""Conversion speed (issue 8 point 5): events per second of `kob convert`, per stage and overall.

  convert_bench.py --builddir DIR [--kernels N] [--raw PREFIX.kob] [--runs N] [--out DIR]

(--out keeps the files made there; without it they go to a temporary directory, removed at the end)

Records a raw trace (--format=none) of benchmarks/tiny_kernels_openmp with N OpenMP-backend
Kokkos kernels on 2 threads (about 16 records per kernel), unless --raw names one. Then, --runs
times each (the median is printed):
  stages   benchmarks/convert_stages on the raw trace: open, decode (every record, nothing
           built), the builder pass kob convert makes (streaming timeline builder, summary fold,
           timeline kept; decoding included), the builder alone (the fold's share is the
           difference), the trace producer alone (a sink that keeps nothing), the .pftrace and
           Chrome JSON writers (each with its own producer walk and the file write), the two
           summary files;
  overall  `kob convert` itself, with the formats the run was recorded with by default
           (perfetto, summary, json) and with --to=all.
Events are the records of the raw trace. Prints markdown tables: wall time, CPU time (of the
converting thread for the stages, user + sys of the process overall), and per core, from the
CPU time: ns per event and millions of events per second.
Needs a build with -Dbenchmarks=true (convert_stages, tiny_kernels_openmp).
"""
import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def record(a, out):
    prog = a.builddir / "benchmarks" / "tiny_kernels_openmp"
    if not prog.exists():
        sys.exit(f"convert_bench: {prog} is missing (meson configure -Dbenchmarks=true, and the OpenMP-backend Kokkos)")
    lib = a.builddir / "src" / "libkokkos_ompt_bridge.so"
    prefix = out / "bench"
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false", "OMP_TOOL_LIBRARIES": str(lib),
                "KOKKOS_PROFILE_LIBRARY": str(lib), "KOB_ARGS": f"--quiet --format=none --output={prefix}"})
    p = subprocess.run([str(prog), str(a.kernels)], env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"convert_bench: {prog} exited {p.returncode}: {p.stderr[-2000:]}")
    return pathlib.Path(str(prefix) + ".kob")


def fresh(out, prefix):
    """Untimed, before each run: the previous run's files removed (replacing them would also free
    their page cache, the kernel's work for whoever deletes a file, not the conversion's) and its
    writes flushed (so that no run pays for the write-back of the one before)."""
    for old in out.glob(prefix + ".*"):
        if old.is_dir():
            shutil.rmtree(old)  # an OTF2 archive (--to=all)
        else:
            old.unlink()
    os.sync()


def stages(a, raw, out):
    prog = a.builddir / "benchmarks" / "convert_stages"
    if not prog.exists():
        sys.exit(f"convert_bench: {prog} is missing (meson configure -Dbenchmarks=true)")
    runs = {}
    records = 0
    for _ in range(a.runs):
        fresh(out, "stages")
        p = subprocess.run([str(prog), str(raw), str(out / "stages")], capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            sys.exit(f"convert_bench: convert_stages exited {p.returncode}: {p.stderr[-2000:]}")
        for line in p.stdout.splitlines():
            f = line.split()
            if f[0] == "records":
                records = int(f[1])
            elif f[0] == "stage":
                runs.setdefault(f[1], []).append((int(f[3]), int(f[5])))
    return records, {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}


def overall(a, raw, out, to):
    kob = a.builddir / "src" / "kob"
    cmd = [str(kob), "convert", str(raw), f"--output={out / 'conv'}", "--quiet"] + ([f"--to={to}"] if to else [])
    walls, cpus = [], []
    for _ in range(a.runs):
        fresh(out, "conv")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if p.returncode != 0:
            sys.exit(f"convert_bench: kob convert exited {p.returncode}: {p.stderr[-2000:]}")
    return statistics.median(walls), statistics.median(cpus)


def row(name, wall_ns, cpu_ns, records):
    # Per core: from the CPU time (on a busy machine the wall time also counts the waits for a core).
    per = cpu_ns / records if records else float("nan")
    rate = records / (cpu_ns / 1e9) / 1e6 if cpu_ns > 0 else float("inf")
    return f"| {name} | {wall_ns / 1e6:,.1f} | {cpu_ns / 1e6:,.1f} | {per:.1f} | {rate:.2f} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", type=pathlib.Path, default=pathlib.Path("build"))
    ap.add_argument("--kernels", type=int, default=200_000)
    ap.add_argument("--raw", type=pathlib.Path, help="a raw trace to convert instead of recording one")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    a.builddir = a.builddir.resolve()
    out = (a.out or pathlib.Path(tempfile.mkdtemp(prefix="kob-convert-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    raw = a.raw.resolve() if a.raw else record(a, out)
    records, st = stages(a, raw, out)
    print(f"\n### `kob convert` by stage: {raw.name}, {records:,} events ({raw.stat().st_size / 1e6:.1f} MB raw), "
          f"median of {a.runs}\n")
    print("| stage | wall ms | CPU ms | ns/event (CPU) | M events/s per core |")
    print("|---|---:|---:|---:|---:|")
    names = {"open": "open (header, block index, names)", "decode": "decode (all records)",
             "build_and_fold": "builder pass as kob convert makes it: timeline + summary fold (decode included)",
             "build_timeline": "builder alone, timeline collected (decode included)",
             "producer": "trace producer alone (null sink)", "perfetto": ".pftrace (producer + encoding + write)",
             "chrome": "Chrome JSON (producer + encoding + write)", "summary_files": "summary.txt + summary.json"}
    for k, label in names.items():
        if k in st:
            print(row(label, st[k][0], st[k][1], records))
    if "build_and_fold" in st and "build_timeline" in st:
        print(row("summary fold (the two above: difference)", st["build_and_fold"][0] - st["build_timeline"][0],
                  st["build_and_fold"][1] - st["build_timeline"][1], records))
    for k in ("perfetto", "chrome"):
        if k in st and "producer" in st:
            print(row(f"{k} encoding only (minus the producer)", st[k][0] - st["producer"][0], st[k][1] - st["producer"][1], records))
    print(f"\n### `kob convert` overall, median of {a.runs}\n")
    print("| command | wall ms | CPU ms (user+sys) | ns/event (CPU) | M events/s per core |")
    print("|---|---:|---:|---:|---:|")
    for to, label in ((None, "default formats (perfetto, summary, json)"), ("all", "--to=all (+ Chrome JSON)")):
        w, c = overall(a, raw, out, to)
        print(row(f"`kob convert` {label}", w * 1e9, c * 1e9, records))
    if a.out:
        print(f"\n(outputs in {out})")
    else:
        shutil.rmtree(out)  # a temporary directory: the raw trace and the files made from it


if __name__ == "__main__":
    main()
