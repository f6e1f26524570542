#!/usr/bin/env bash
# The main job on the bundled samples: set up, build, then run samples/kokkos_sample (Kokkos on
# the OpenMP backend, 2 threads) with the library loaded through both routes and show what it
# recorded; then samples/tuning_sample, whose findings and HTML report show what to change.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
scripts/setup.sh
scripts/build.sh
lib=$PWD/build/src/libkokkos_ompt_bridge.so
mkdir -p build/demo
echo "running: build/samples/kokkos_sample with KOKKOS_PROFILE_LIBRARY and OMP_TOOL_LIBRARIES set to $lib"
OMP_NUM_THREADS=2 OMP_PROC_BIND=false \
KOKKOS_PROFILE_LIBRARY="$lib" KOKKOS_TOOLS_LIBS="$lib" OMP_TOOL_LIBRARIES="$lib" \
    build/samples/kokkos_sample --kokkos-tools-args="--output=$PWD/build/demo/kob-demo"
# The second sample has performance problems: its summary lists them as findings, and its HTML
# report (one self-contained file) shows them with the timeline.
echo
echo "running: build/samples/tuning_sample (an imbalanced kernel, tiny kernels, repeated deep copies, a contended lock)"
OMP_NUM_THREADS=2 OMP_PROC_BIND=false \
KOKKOS_PROFILE_LIBRARY="$lib" KOKKOS_TOOLS_LIBS="$lib" OMP_TOOL_LIBRARIES="$lib" \
    build/samples/tuning_sample --kokkos-tools-args="--output=$PWD/build/demo/kob-tuning --format=perfetto,summary,json,html"
echo "report: $PWD/build/demo/kob-tuning.html (open it in any browser: findings first, then the timeline and tables)"
