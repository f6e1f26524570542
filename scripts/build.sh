#!/usr/bin/env bash
# Configures (once) and builds the project in build/ with clang++-22. Extra arguments go to
# `meson setup` (e.g. -Dbenchmarks=true).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
if [ ! -f build/build.ninja ]; then
    CXX=clang++-22 meson setup build "$@" >build/meson-setup.log 2>&1 || { cat build/meson-setup.log; exit 1; }
elif [ $# -gt 0 ]; then
    meson configure build "$@" >/dev/null
fi
ninja -C build >build/ninja.log 2>&1 || { tail -n 60 build/ninja.log; exit 1; }
echo "built: build/src/libkokkos_ompt_bridge.so"
