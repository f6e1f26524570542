#!/usr/bin/env python3
"""Makes the README's picture, docs/report.png: the HTML report of the bundled sample
samples/tuning_sample.cpp (2 threads, as scripts/demo.sh runs it), shot by the headless Chromium
the test suite drives (tests/integration/chromium_page.py).

    python3 scripts/readme_screenshot.py [--build build] [--out docs/report.png]"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import chromium_page as cp  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(ROOT, "build"))
ap.add_argument("--out", default=os.path.join(ROOT, "docs", "report.png"))
a = ap.parse_args()

lib = os.path.join(a.build, "src", "libkokkos_ompt_bridge.so")
with tempfile.TemporaryDirectory(prefix="kob-shot-") as wd:
    prefix = os.path.join(wd, "kob-tuning")
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false", KOKKOS_PROFILE_LIBRARY=lib,
               KOKKOS_TOOLS_LIBS=lib, OMP_TOOL_LIBRARIES=lib, KOB_ARGS=f"--output={prefix} --format=html,summary,json --quiet")
    subprocess.run([os.path.join(a.build, "samples", "tuning_sample")], env=env, check=True, stdout=subprocess.DEVNULL)
    rc, _, err = cp.screenshot("file://" + prefix + ".html", a.out, size="1280,1400")
    if rc != 0 or not os.path.exists(a.out):
        sys.exit(f"readme_screenshot: chromium failed ({rc}): {err.strip()[-300:]}")
    w, h, px = cp.png_pixels(a.out)
    print(f"wrote {a.out}: {w} x {h}, {len({p for row in px for p in row})} colours")
