#!/usr/bin/env bash
# benchmarks/run_clock.sh - what the clock calibration costs and how exact it is:
#   (a) start-up: wall time of a one-region OpenMP program (benchmarks/empty_parallel.cpp run
#       with N=1: one warm-up region and one measured region, 1 thread) with no tool and with
#       OMP_TOOL_LIBRARIES=libkokkos_ompt_bridge.so, median of --runs runs, the process timed from
#       fork to exit (the tool writes its files into a temporary directory);
#   (b) accuracy: benchmarks/clock_drift.cpp, the library's tick-to-ns translation against
#       CLOCK_MONOTONIC_RAW every 100 ms over --seconds seconds.
#
# Usage: benchmarks/run_clock.sh [--builddir DIR] [--no-build] [--runs N] [--seconds S] [--lib PATH]
#   --builddir DIR  meson build directory (default: build), configured with -Dbenchmarks=true
#   --lib PATH      time this build of libkokkos_ompt_bridge.so instead of DIR's (e.g. an older one)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
builddir=build; do_build=1; runs=21; seconds=10; lib=""
while [ $# -gt 0 ]; do
  case "$1" in
    --builddir) builddir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_clock.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done
if [ "$do_build" = 1 ]; then
  if [ ! -f "$builddir/build.ninja" ]; then
    CXX=${CXX:-clang++-22} meson setup "$builddir" -Dbenchmarks=true >&2
  else
    meson configure "$builddir" -Dbenchmarks=true >&2
  fi
  ninja -C "$builddir" benchmarks/empty_parallel benchmarks/clock_drift src/libkokkos_ompt_bridge.so >&2
fi
lib=${lib:-$builddir/src/libkokkos_ompt_bridge.so}
python3 - "$builddir/benchmarks/empty_parallel" "$(realpath "$lib")" "$runs" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
prog, lib, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
for k in ("OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOB_ARGS"):
    base.pop(k, None)
def timed(env):
    t = time.perf_counter()
    subprocess.run([prog, "1"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1e3
out = tempfile.mkdtemp(prefix="kob-clock-bench-")
tool = dict(base, OMP_TOOL_LIBRARIES=lib, KOB_ARGS=f"--output={out}/run --quiet")
no_tool, with_tool = [], []
for _ in range(runs):  # interleaved, so that load on the machine hits both alike
    no_tool.append(timed(base))
    with_tool.append(timed(tool))
print(f"one-region OpenMP program (empty_parallel 1, 1 thread), median of {runs} runs:")
print(f"  no tool:                  {statistics.median(no_tool):6.1f} ms")
print(f"  libkokkos_ompt_bridge.so: {statistics.median(with_tool):6.1f} ms   ({lib})")
PY
echo "clock translation over ${seconds} s:"
"$builddir/benchmarks/clock_drift" "$seconds" | sed 's/^/  /'
