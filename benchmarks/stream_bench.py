#!/usr/bin/env python3
"""Streaming-trace benchmarks (issue 8): memory, file sizes, exit time and whole-run overhead.

  stream_bench.py --builddir DIR [--runs N] [--small N] [--md-steps N] [--md-atoms N] [--omp-kernels N]
                  [--serial-kernels N] [--only overhead,md,omp,serial,exits] [--out DIR]

  overhead  benchmarks/small_kernels (OpenMP-backend Kokkos, 2 threads, ~10 k kernels/s, ~20
            OpenMP events per kernel): the whole process's wall time, start and exit included,
            with no tool, the empty tools, and the library with --format=none, summary,json and
            the default formats, median of --runs interleaved runs.
  md        the same for benchmarks/md_step (a molecular-dynamics-shaped step: kernels of several
            sizes and plain OpenMP regions outside them, ~10 k kernels/s on 2 threads).
  omp       tiny_kernels_openmp with --omp-kernels kernels on 2 threads (default 10^7).
  serial    tiny_kernels_serial (Debian's Serial Kokkos) with --serial-kernels kernels (default
            5 x 10^7, i.e. 10^8 Kokkos events).
  exits     100 k empty `omp parallel` regions (empty_parallel) and 100 k OpenMP-backend kernels
            (tiny_kernels_openmp), 2 threads, with --format=none, chrome and perfetto: file sizes
            and the exit (end of the loop to end of the process), median of --runs.
  For omp and serial, once without and once with the tool: peak RSS (the tool's: with minus
  without), events recorded, raw trace bytes per event, .pftrace bytes per event, events dropped,
  time from the end of the launch loop to the end of the process (the exit: Kokkos::finalize
  and our conversion), and `kob convert` time on the same raw trace.
Prints markdown tables (the README's).
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, env):
    """Runs cmd; returns (wall seconds, stdout, stderr, end monotonic ns)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    t1 = time.monotonic_ns()
    if p.returncode != 0:
        sys.exit(f"stream_bench: {cmd[0]} exited {p.returncode}: {err[-2000:]}")
    return (t1 - t0) / 1e9, out, err, t1


def peak_rss_kib(cmd, env):
    """Runs cmd through the peak_rss runner (a child's ru_maxrss counts what its parent had at
    fork: this script's tens of MiB); returns (peak RSS KiB, stdout, wall seconds, end time)."""
    t0 = time.monotonic_ns()
    p = subprocess.run([str(PEAK_RSS)] + cmd, env=env, capture_output=True, text=True)
    t1 = time.monotonic_ns()
    peak = [l for l in p.stderr.splitlines() if l.startswith("peak_rss_kib ")]
    if p.returncode != 0 or not peak:
        sys.exit(f"stream_bench: {cmd[0]} failed with status {p.returncode}: {p.stderr[-2000:]}")
    return int(peak[-1].split()[1]), p.stdout, (t1 - t0) / 1e9, t1


PEAK_RSS = None  # set by main: the builddir's benchmarks/peak_rss


def tool_env(lib, args):
    env = dict(os.environ)
    env["KOKKOS_PROFILE_LIBRARY"] = str(lib)
    env["KOKKOS_TOOLS_LIBS"] = str(lib)
    env["OMP_TOOL_LIBRARIES"] = str(lib)
    env["KOB_ARGS"] = args
    return env


def base_env(threads):
    env = dict(os.environ)
    for k in ("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS"):
        env.pop(k, None)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OMP_PROC_BIND"] = "false"
    return env


def loop_end(out):
    for line in out.splitlines():
        if line.startswith("loop end steady ns: "):
            return int(line.split(":")[1])
    return None


CONFIGS = [  # (key, label, KOB_ARGS or None)
    ("none", "no tool", None),
    ("empty", "empty Kokkos tool + empty OMPT tool (the same callbacks, empty bodies)", None),
    ("raw", "`--format=none` (recording, the raw trace)", "--format=none"),
    ("sum", "`--format=summary,json` (streaming conversion at exit)", "--format=summary,json"),
    ("tool", "default formats (conversion at exit)", ""),
]


def whole_run(a, out, title, cmd, kernels_of):
    """Median wall time of the whole process (start and exit included) for each configuration,
    --runs interleaved rounds; overheads against no tool and against the empty tools."""
    empty_kokkos = a.builddir / "benchmarks" / "libkob_empty_tool.so"
    empty_ompt = a.builddir / "benchmarks" / "libkob_empty_ompt_tool.so"
    envs = {}
    threads = a.threads
    for key, _, args in CONFIGS:
        if key == "none":
            envs[key] = base_env(threads)
        elif key == "empty":
            envs[key] = {**base_env(threads), "KOKKOS_PROFILE_LIBRARY": str(empty_kokkos), "KOKKOS_TOOLS_LIBS": str(empty_kokkos),
                         "OMP_TOOL_LIBRARIES": str(empty_ompt)}
        else:
            envs[key] = {**tool_env(a.lib, f"--quiet --output={out}/{cmd[0].rsplit('/', 1)[-1]}-{key} {args}".rstrip()),
                         "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "false"}
    walls = {key: [] for key, _, _ in CONFIGS}
    outputs = set()
    for _ in range(a.runs):
        for key, _, _ in CONFIGS:
            wall, o, _, _ = run(cmd, envs[key])
            walls[key].append(wall)
            outputs.add(o)
    if len(outputs) != 1:
        sys.exit(f"stream_bench: {cmd[0]} printed different outputs: {sorted(outputs)}")
    med = {key: statistics.median(v) for key, v in walls.items()}
    kernels = kernels_of(f"{out}/{cmd[0].rsplit('/', 1)[-1]}-tool.summary.json")
    print(f"\n### Whole-run overhead: {title}, {threads} thread(s) on {os.cpu_count()} cores, median of {a.runs} interleaved runs\n")
    print("| configuration | wall s (median) | kernels/s | vs no tool | vs empty tools |")
    print("|---|---:|---:|---:|---:|")
    for key, label, _ in CONFIGS:
        m = med[key]
        vs0 = "" if key == "none" else f"{100 * (m - med['none']) / med['none']:+.1f}%"
        vse = "" if key in ("none", "empty") else f"{100 * (m - med['empty']) / med['empty']:+.1f}%"
        print(f"| {label} | {m:.3f} | {kernels / m:,.0f} | {vs0} | {vse} |")
    spread = {key: (min(v), max(v)) for key, v in walls.items()}
    print("\nSpread (min - max wall s): " + ", ".join(f"{key} {lo:.3f}-{hi:.3f}" for key, (lo, hi) in spread.items()))


def summary_kernels(path):
    with open(path) as f:
        return sum(k["calls"] for k in json.load(f)["kernels"])


def overhead(a, out):
    prog = a.builddir / "benchmarks" / "small_kernels"
    whole_run(a, out, f"small_kernels {a.small} kernels of {a.work} elements", [str(prog), str(a.small), str(a.work)], summary_kernels)


def md(a, out):
    prog = a.builddir / "benchmarks" / "md_step"
    whole_run(a, out, f"md_step {a.md_steps} steps of {a.md_atoms} atoms", [str(prog), str(a.md_steps), str(a.md_atoms)],
              summary_kernels)


def exits(a, out):
    """The output-files table of README: trace sizes and exit time per format."""
    progs = [("100 k empty `omp parallel` regions (`benchmarks/empty_parallel.cpp`)", a.builddir / "benchmarks" / "empty_parallel"),
             ("100 k OpenMP-backend Kokkos kernels (`benchmarks/tiny_kernels.cpp`)", a.builddir / "benchmarks" / "tiny_kernels_openmp")]
    print("\n### Trace sizes and exit time per format (2 threads)\n")
    print("| run | Chrome JSON | `.pftrace` | exit, `none` / `chrome` / `perfetto` |")
    print("|---|---|---|---|")
    for label, prog in progs:
        if not prog.exists():
            continue
        times, sizes = {}, {}
        for fmt in ("none", "chrome", "perfetto"):
            prefix = f"{out}/exit-{prog.name}-{fmt}"
            env = {**tool_env(a.lib, f"--quiet --output={prefix} --format={fmt}"), "OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"}
            walls = []
            for _ in range(a.runs):
                _, o, _, end = run([str(prog), "100000"], env)
                walls.append((end - loop_end(o)) / 1e9)
            times[fmt] = statistics.median(walls)
            for ext in (".trace.json", ".pftrace"):
                if os.path.exists(prefix + ext):
                    sizes[ext] = os.path.getsize(prefix + ext)
        with open(f"{out}/exit-{prog.name}-chrome.trace.json") as f:
            events = len(json.load(f)["traceEvents"])
        cj, pf = sizes.get(".trace.json", 0), sizes.get(".pftrace", 0)
        print(f"| {label}; {events:,} Chrome events | {cj / 1e6:.1f} MB, {cj / events:.0f} B/event | {pf / 1e6:.1f} MB, "
              f"{pf / events:.0f} B/event | {times['none']:.2f} / {times['chrome']:.2f} / {times['perfetto']:.2f} s |")


def scale(a, out, name, prog, n, threads, formats, convert):
    cmd = [str(prog), str(n)]
    rss0, out0, _, _ = peak_rss_kib(cmd, base_env(threads))
    prefix = f"{out}/{name}"
    env = {**tool_env(a.lib, f"--quiet --output={prefix} --format={formats}"), "OMP_NUM_THREADS": str(threads),
           "OMP_PROC_BIND": "false"}
    rss1, out1, wall1, end1 = peak_rss_kib(cmd, env)
    le = loop_end(out1)
    exit_s = (end1 - le) / 1e9 if le else float("nan")
    kob = pathlib.Path(prefix + ".kob")
    events, lost, ended = raw_counts(kob)
    pf = pathlib.Path(prefix + ".pftrace")
    conv_s = None
    if convert:
        t0 = time.monotonic()
        conv = subprocess.run([str(a.kob), "convert", str(kob), f"--output={out}/{name}-conv", "--quiet"],
                              capture_output=True, text=True)
        conv_s = time.monotonic() - t0 if conv.returncode == 0 else None
        if not pf.exists():
            pf = pathlib.Path(f"{out}/{name}-conv.pftrace")
    return {
        "name": name, "n": n, "threads": threads, "rss0": rss0, "rss1": rss1, "events": events, "formats": formats,
        "kob": kob.stat().st_size, "pftrace": pf.stat().st_size if pf.exists() else 0,
        "dropped": lost, "ended": ended, "exit_s": exit_s, "wall": wall1, "convert_s": conv_s, "convert": convert,
    }


def raw_counts(path):
    """(records in COMPACT blocks, records in ring slots past them, LOST events, has END) of a raw
    trace, from block headers and META entries only (docs/raw-format.md)."""
    import struct
    compact = lost = 0
    end = False
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        off = 4096
        while off + 48 <= size:
            f.seek(off)
            h = f.read(48)
            magic, kind, _flags, _thread, payload, _seq, records = struct.unpack_from("<IHHIIQI", h)
            if magic != 0x4B4C424B or off + 48 + payload > size:
                break
            if kind == 1:
                compact += records
            elif kind == 3:
                meta = f.read(payload)
                e = 0
                while e + 8 <= len(meta):
                    tag, _z, ln = struct.unpack_from("<HHI", meta, e)
                    body = meta[e + 8:e + 8 + ln]
                    if tag == 5:
                        lost += struct.unpack_from("<Q", body, 24)[0]
                    elif tag == 6:
                        end = True
                    e += 8 + ln
            off += (48 + payload + 7) // 8 * 8
    return compact, lost, end


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", type=pathlib.Path, default=pathlib.Path("build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of the overhead and md runs (2: every core of this VM)")
    ap.add_argument("--small", type=int, default=20000)
    ap.add_argument("--work", type=int, default=7000, help="elements per small kernel (~10 k kernels/s on 2 threads here)")
    ap.add_argument("--md-steps", type=int, default=3000)
    ap.add_argument("--md-atoms", type=int, default=40000, help="atoms per md_step step (~10 k kernels/s on 2 threads here)")
    ap.add_argument("--omp-kernels", type=int, default=10_000_000)
    ap.add_argument("--serial-kernels", type=int, default=50_000_000)
    ap.add_argument("--only", default="overhead,omp,serial")
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    a.builddir = a.builddir.resolve()
    a.lib = a.builddir / "src" / "libkokkos_ompt_bridge.so"
    a.kob = a.builddir / "src" / "kob"
    global PEAK_RSS
    PEAK_RSS = a.builddir / "benchmarks" / "peak_rss"
    out = a.out or pathlib.Path(tempfile.mkdtemp(prefix="kob-stream-"))
    out.mkdir(parents=True, exist_ok=True)
    only = set(a.only.split(","))
    if "overhead" in only:
        overhead(a, out)
    if "md" in only:
        md(a, out)
    if "exits" in only:
        exits(a, out)
    rows = []
    omp = a.builddir / "benchmarks" / "tiny_kernels_openmp"
    serial = a.builddir / "benchmarks" / "tiny_kernels_serial"
    # The long runs record only (--format=none), then convert at exit with the default formats
    # (streaming: the peak RSS includes the exit); the medium runs also time `kob convert`.
    if "omp" in only:
        rows.append(scale(a, out, "omp-long-none", omp, a.omp_kernels, 2, "none", False))
        rows.append(scale(a, out, "omp-long", omp, a.omp_kernels, 2, "perfetto,summary,json", False))
        rows.append(scale(a, out, "omp", omp, a.omp_kernels // 10, 2, "perfetto,summary,json", True))
    if "serial" in only:
        rows.append(scale(a, out, "serial-long-none", serial, a.serial_kernels, 1, "none", False))
        rows.append(scale(a, out, "serial-long", serial, a.serial_kernels, 1, "perfetto,summary,json", False))
        rows.append(scale(a, out, "serial", serial, a.serial_kernels // 10, 1, "perfetto,summary,json", True))
    if rows:
        print("\n### Long runs: memory, sizes, exit\n")
        print("| run | --format | events recorded | peak RSS no tool | with tool | tool's share | raw B/event | .pftrace B/event | dropped | clean END | exit s | `kob convert` s |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
        for r in rows:
            ev = r["events"] or 1
            conv = "–" if not r["convert"] else (f"{r['convert_s']:.1f}" if r["convert_s"] is not None else "failed")
            pfb = f"{r['pftrace'] / ev:.1f}" if r["pftrace"] else "–"
            print(f"| {r['name']}: {r['n']:,} kernels, {r['threads']} thr. | {r['formats']} | {r['events']:,} | "
                  f"{r['rss0'] / 1024:.0f} MiB | {r['rss1'] / 1024:.0f} MiB | {(r['rss1'] - r['rss0']) / 1024:.0f} MiB | "
                  f"{r['kob'] / ev:.2f} | {pfb} | {r['dropped']} | {'yes' if r['ended'] else 'no'} | {r['exit_s']:.2f} | {conv} |")
    if a.out:
        print(f"\n(outputs in {out})")
    else:
        shutil.rmtree(out, ignore_errors=True)  # its own temporary folder: --out keeps the outputs


if __name__ == "__main__":
    main()
