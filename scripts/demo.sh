#!/usr/bin/env bash
# The main job on the bundled sample: set up, build, then run samples/kokkos_sample (Kokkos on
# the OpenMP backend, 2 threads) with the library loaded through both routes, and show what it
# recorded.
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
echo "trace: $PWD/build/demo/kob-demo.pftrace (open it in https://ui.perfetto.dev; --format=chrome writes JSON for chrome://tracing)"
