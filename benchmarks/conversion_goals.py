#!/usr/bin/env python3
"""The conversion's goals (issue 42), each with its figure now and whether it is met.

  conversion_goals.py --builddir DIR [--only summary,decode,regions,process,cores,memory]
                      [--kernels N] [--convert-kernels N] [--cores-kernels N] [--memory-records N]
                      [--runs N] [--out DIR]

  summary  callgrind of `kob convert RUN --to=summary -j 1` of a tiny_kernels_openmp raw trace
           (--convert-kernels, 10^4; 2 threads): Ir per kernel, whole process. Goal <= 1,500.
  decode   the same profile: the decoding of the chunks and the ticks made ns (inclusive of the
           functions DECODE_FUNCTIONS names) per raw record as written. Goal <= 60.
  regions  callgrind of `kob convert --to=summary -j 1` of samples/openmp_rules small_reduction
           (20,000 small `parallel for reduction` regions, plain OpenMP): Ir per region. Goal <= 2,000.
  process  callgrind of the whole process, tiny_kernels_openmp --kernels (20,000), the empty
           Kokkos + OMPT tools and --format=summary,json: Ir per kernel over the empty tools.
           Goal <= +2,500.
  cores    `kob convert RUN --to=summary,json -j 2` of a --cores-kernels (10^6) raw trace: wall
           against CPU (user + sys), --runs interleaved runs, medians. Goal <= 0.6. Run it on an
           idle machine.
  memory   peak RSS of `kob convert RUN --to=summary,json` of a raw trace of at least
           --memory-records (10^8) records (tiny_kernels_openmp, 10 records a kernel: 670 MB of
           raw trace, a few minutes to record), -j 1 and -j 2. Goal <= 256 MiB each. Not in the
           default --only: it takes long and needs the disk.

DIR needs -Dbenchmarks=true. Instruction counts are exact and repeatable (no timing). Prints
markdown tables; docs/benchmarks.md holds the figures and this command.
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import pipeline_cost as pc  # noqa: E402  (its callgrind runner, environments and raw trace count)

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The decoding and the ticks to ns, by the functions that hold them (inclusive, so what they call
# counts): the engine's names, updated with it.
# EventDecoder: a COMPACT chunk's bytes (decode) or a RING chunk's records (append) made events,
# ticks made ns and nudged in the same pass.
DECODE_FUNCTIONS = ["kob::EventDecoder::decode(", "kob::EventDecoder::append("]


def fail(msg):
    sys.exit(f"conversion_goals: {msg}")


def met(value, goal):
    return f"{'met' if value <= goal else 'not met'}"


def convert_profile(a, out, raw, name, to="summary"):
    """callgrind of a -j 1 conversion; returns (total Ir, profile files)."""
    totals = pc.callgrind([str(a.kob), "convert", raw, f"--to={to}", "-j", "1", f"--output={out}/{name}", "--quiet"],
                          pc.base_env(), f"{out}/cg-{name}")
    return sum(totals.values()), list(totals)


def summary_rows(a, out, want_decode):
    n = a.convert_kernels
    raw = pc.record_raw(a, out, n, "goals-conv")
    total, profiles = convert_profile(a, out, raw, "goals-summary")
    rows = []
    if "summary" in a.only:
        rows.append((f"`kob convert --to=summary -j 1`, {n:,}-kernel trace, Ir per kernel", total / n, 1500))
    if want_decode:
        records = pc.raw_records(raw)
        dec = sum(pc.inclusive_ir(f, fn) for f in profiles for fn in DECODE_FUNCTIONS)
        if dec == 0:
            fail(f"none of {DECODE_FUNCTIONS} in the profile: update DECODE_FUNCTIONS to the engine's names")
        rows.append((f"decode + ns, Ir per raw record ({records:,} records)", dec / records, 60))
    return rows


def regions_rows(a, out):
    prog = a.builddir / "samples" / "openmp_rules"
    if not prog.exists():
        fail(f"{prog} is missing")
    prefix = f"{out}/goals-regions"
    p = subprocess.run([str(prog), "small_reduction"], env=pc.tool_env(a.lib, f"--quiet --output={prefix} --format=none"),
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"openmp_rules small_reduction exited {p.returncode}: {p.stderr[-2000:]}")
    total, _ = convert_profile(a, out, prefix + ".kob", "goals-regions-sum")
    return [("`kob convert --to=summary -j 1`, 20,000 `parallel for reduction` regions, Ir per region", total / 20000, 2000)]


def process_rows(a, out):
    prog = str(a.builddir / "benchmarks" / "tiny_kernels_openmp")
    empty_k = a.builddir / "benchmarks" / "libkob_empty_tool.so"
    empty_o = a.builddir / "benchmarks" / "libkob_empty_ompt_tool.so"
    n = a.kernels
    empty_env = {**pc.base_env(), "KOKKOS_PROFILE_LIBRARY": str(empty_k), "KOKKOS_TOOLS_LIBS": str(empty_k),
                 "OMP_TOOL_LIBRARIES": str(empty_o)}
    base = sum(pc.callgrind([prog, str(n)], empty_env, f"{out}/cg-goals-empty").values())
    sj = sum(pc.callgrind([prog, str(n)], pc.tool_env(a.lib, f"--quiet --output={out}/goals-sj --format=summary,json"),
                          f"{out}/cg-goals-sj").values())
    return [(f"whole process `--format=summary,json`, {n:,} kernels, Ir per kernel over the empty tools", (sj - base) / n, 2500)]


def cores_rows(a, out):
    n = a.cores_kernels
    raw = pc.record_raw(a, out, n, "goals-cores")
    ratios, walls, cpus = [], [], []
    for _ in range(a.runs):
        prefix = f"{out}/goals-cores-out"
        for ext in (".summary.json", ".summary.txt"):
            if os.path.exists(prefix + ext):
                os.unlink(prefix + ext)
        t0 = time.monotonic()
        before = os.times()
        subprocess.run([str(a.kob), "convert", raw, "--to=summary,json", "-j", "2", f"--output={prefix}", "--quiet"],
                       check=True)
        after = os.times()
        wall = time.monotonic() - t0
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        walls.append(wall)
        cpus.append(cpu)
        ratios.append(wall / cpu)
    med = statistics.median(ratios)
    label = (f"`kob convert -j 2 --to=summary,json`, {n:,}-kernel trace, wall / CPU (median of {a.runs}: "
             f"wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s; range {min(ratios):.3f}-{max(ratios):.3f})")
    return [(label, med, 0.6)]


def memory_rows(a, out):
    kernels = (a.memory_records + 9) // 10
    raw = pc.record_raw(a, out, kernels, "goals-memory")
    records = pc.raw_records(raw)
    if records < a.memory_records:
        fail(f"the raw trace holds {records:,} records, fewer than {a.memory_records:,}")
    rows = []
    for j in ("1", "2"):
        p = subprocess.run([str(a.builddir / "benchmarks" / "peak_rss"), str(a.kob), "convert", raw, "--to=summary,json",
                            "-j", j, f"--output={out}/goals-memory-{j}", "--quiet"], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"kob convert -j {j} exited {p.returncode}: {p.stderr[-2000:]}")
        kib = next(int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("peak_rss_kib "))
        rows.append((f"peak RSS, `kob convert -j {j} --to=summary,json` of {records:,} records, MiB", kib / 1024, 256))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", type=pathlib.Path, default=ROOT / "build-bench")
    ap.add_argument("--only", default="summary,decode,regions,process,cores")
    ap.add_argument("--kernels", type=int, default=20000)
    ap.add_argument("--convert-kernels", type=int, default=10000)
    ap.add_argument("--cores-kernels", type=int, default=1000000)
    ap.add_argument("--memory-records", type=int, default=100_000_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    a.builddir = a.builddir.resolve()
    pc.a_builddir = a.builddir
    a.lib = a.builddir / "src" / "libkokkos_ompt_bridge.so"
    a.kob = a.builddir / "src" / "kob"
    a.only = set(a.only.split(","))
    unknown = a.only - {"summary", "decode", "regions", "process", "cores", "memory"}
    if unknown:
        fail(f"unknown --only part(s): {', '.join(sorted(unknown))}")
    for need in (a.lib, a.kob, a.builddir / "benchmarks" / "tiny_kernels_openmp", a.builddir / "benchmarks" / "convert_stages"):
        if not need.exists():
            fail(f"{need} is missing (configure {a.builddir} with -Dbenchmarks=true and build it)")
    out = a.out or pathlib.Path(tempfile.mkdtemp(prefix="kob-goals-"))
    out.mkdir(parents=True, exist_ok=True)
    print("| goal (issue 42) | now | goal | |")
    print("|---|---:|---:|---|")
    parts = []
    if a.only & {"summary", "decode"}:
        parts.append(lambda: summary_rows(a, out, "decode" in a.only))
    for name, rows in (("regions", regions_rows), ("process", process_rows), ("cores", cores_rows), ("memory", memory_rows)):
        if name in a.only:
            parts.append(lambda rows=rows: rows(a, out))
    for part in parts:
        for label, value, goal in part():
            fmt = (lambda v: f"{v:.3f}") if goal < 1 else (lambda v: f"{v:,.1f}")
            print(f"| {label} | {fmt(value)} | ≤ {fmt(goal)} | {met(value, goal)} |")
            sys.stdout.flush()
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
