#!/usr/bin/env bash
# The main job on the bundled samples: set up and build only what it runs, then run
# samples/kokkos_sample (Kokkos on the OpenMP backend, 2 threads) with the library loaded through
# both routes and show what it recorded; then samples/tuning_sample, whose findings and HTML report
# show what to change. Each step says what it does; the time of each is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=steps.sh
. scripts/steps.sh
steps_begin
scripts/setup.sh --demo
scripts/build.sh --demo
lib=$PWD/build/src/libkokkos_ompt_bridge.so
mkdir -p build/demo
step_start "running build/samples/kokkos_sample with KOKKOS_PROFILE_LIBRARY and OMP_TOOL_LIBRARIES set to build/src/libkokkos_ompt_bridge.so"
OMP_NUM_THREADS=2 OMP_PROC_BIND=false \
KOKKOS_PROFILE_LIBRARY="$lib" KOKKOS_TOOLS_LIBS="$lib" OMP_TOOL_LIBRARIES="$lib" \
    build/samples/kokkos_sample --kokkos-tools-args="--output=build/demo/kob-demo"
step_end
# The second sample has performance problems: its summary lists them as findings, and its HTML
# report (one self-contained file) shows them with the timeline.
echo
step_start "running build/samples/tuning_sample (an imbalanced kernel, tiny kernels, repeated deep copies, a contended lock)"
OMP_NUM_THREADS=2 OMP_PROC_BIND=false \
KOKKOS_PROFILE_LIBRARY="$lib" KOKKOS_TOOLS_LIBS="$lib" OMP_TOOL_LIBRARIES="$lib" \
    build/samples/tuning_sample --kokkos-tools-args="--output=build/demo/kob-tuning --format=perfetto,summary,json,html"
step_end
echo "report: build/demo/kob-tuning.html (open it in any browser: findings first, then the timeline and tables)"
steps_report
