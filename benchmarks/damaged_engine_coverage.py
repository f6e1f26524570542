#!/usr/bin/env python3
"""How much of a damaged raw trace the per-thread summary engine covers, and whether what it
covers is the timeline builder's summary byte for byte (issue 42, point 4: the builder's behaviour
on damaged and cut-short traces kept).

  damaged_engine_coverage.py --builddir DIR [--seed S] [--variants N] [--kinds cut,zero,flip]

Records kokkos_sample, openmp_sample and tuning_sample (OMP_NUM_THREADS=2, --format=none), then
makes N damaged copies (seeded): cut at a random byte, a 4 KiB block zeroed at a random byte, or
1-8 bytes flipped within 256 bytes; converts each with KOB_ENGINE=builder and KOB_ENGINE=per-thread
(--to=summary,json, both at one clock rate: KOB_TEST_TICKS_PER_NS, as a file that lost its
calibration would otherwise take this machine's rate at each conversion's moment) and counts
copies made the same, declined (with the reasons) and different (kept as diff-I-KIND.kob in the
output folder). A flip the reader cannot tell from data (no damage named) gives a file both
engines read as whole: such copies are counted apart ("undetected flips"). Prints a table;
docs/architecture.md holds the figures and this command. Takes a few minutes.
"""
import argparse
import collections
import os
import pathlib
import random
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--builddir", required=True, type=pathlib.Path)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--variants", type=int, default=600)
ap.add_argument("--kinds", default="cut,zero")
ap.add_argument("--out", default=None)
a = ap.parse_args()

kob = a.builddir / "src" / "kob"
lib = a.builddir / "src" / "libkokkos_ompt_bridge.so"
out = pathlib.Path(a.out or tempfile.mkdtemp(prefix="kob-damaged-"))
out.mkdir(parents=True, exist_ok=True)
kinds = a.kinds.split(",")

traces = []
for name in ("kokkos_sample", "openmp_sample", "tuning_sample"):
    prog = a.builddir / "samples" / name
    prefix = out / name
    env = {**os.environ, "OMP_NUM_THREADS": "2", "KOKKOS_PROFILE_LIBRARY": str(lib), "KOKKOS_TOOLS_LIBS": str(lib),
           "OMP_TOOL_LIBRARIES": str(lib), "KOB_ARGS": f"--quiet --output={prefix} --format=none"}
    p = subprocess.run([str(prog)], env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"damaged_engine_coverage: {name} failed: {p.stderr[-1000:]}")
    traces.append(pathlib.Path(str(prefix) + ".kob").read_bytes())

rng = random.Random(a.seed)
counts = collections.Counter()
whys = collections.Counter()
conv_env = {**os.environ, "KOB_TEST_TICKS_PER_NS": "2.5"}
for i in range(a.variants):
    data = bytearray(rng.choice(traces))
    kind = rng.choice(kinds)
    x = rng.randrange(4096, len(data))
    if kind == "cut":
        del data[x:]
    elif kind == "zero":
        data[x:x + 4096] = bytes(min(4096, len(data) - x))
    else:
        for _ in range(rng.randint(1, 8)):
            j = min(len(data) - 1, x + rng.randrange(256))
            data[j] ^= rng.randrange(1, 256)
    path = out / "variant.kob"
    path.write_bytes(data)
    files, declined, named = {}, None, False
    for engine in ("builder", "per-thread"):
        prefix = out / f"variant-{engine}"
        p = subprocess.run([str(kob), "convert", str(path), "--to=summary,json", f"--output={prefix}"],
                           env={**conv_env, "KOB_ENGINE": engine}, capture_output=True, text=True, timeout=120)
        named = named or "damaged at byte" in p.stderr
        said = [l.split("declined: ", 1)[1] for l in p.stderr.splitlines() if "the per-thread engine declined: " in l]
        if engine == "per-thread" and said:
            declined = said[0]
        try:
            files[engine] = (p.returncode, (pathlib.Path(str(prefix) + ".summary.json")).read_bytes(),
                             (pathlib.Path(str(prefix) + ".summary.txt")).read_bytes())
        except FileNotFoundError:
            files[engine] = (p.returncode, None, None)
    group = kind if named or kind != "flip" else "undetected flips"
    if declined:
        counts[(group, "declined")] += 1
        whys[declined] += 1
    elif files["builder"] == files["per-thread"]:
        counts[(group, "same")] += 1
    else:
        counts[(group, "different")] += 1
        os.rename(path, out / f"diff-{i}-{kind}.kob")

print(f"seed {a.seed}, {a.variants} copies, in {out}\n")
print("| damage | copies | same | declined | different |")
print("|---|---:|---:|---:|---:|")
for group in sorted({g for g, _ in counts}):
    row = [counts[(group, r)] for r in ("same", "declined", "different")]
    print(f"| {group} | {sum(row)} | {row[0]} | {row[1]} | {row[2]} |")
print("\nwhy declined:")
for why, n in whys.most_common():
    print(f"  {n:5}  {why}")
