#!/usr/bin/env bash
# Configures (once) and builds the project with clang++-22, in build/ or, with --sanitize, in
# build-asan/ (library, unit tests and our test programs built with -fsanitize=address,undefined
# against the shared sanitizer runtime; Kokkos from build/deps). Other arguments go to
# `meson setup` (e.g. -Dbenchmarks=true).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=build
setup_args=()
if [ "${1:-}" = "--sanitize" ]; then
    shift
    builddir=build-asan
    setup_args=(-Dsanitize=address,undefined -Dbuildtype=debugoptimized
                "-Dkokkos_openmp=$PWD/build/deps/kokkos-openmp" "-Dkokkos_openmptarget=$PWD/build/deps/kokkos-openmptarget")
fi
mkdir -p "$builddir"
if [ ! -f "$builddir/build.ninja" ]; then
    CXX=clang++-22 meson setup "$builddir" "${setup_args[@]}" "$@" >"$builddir/meson-setup.log" 2>&1 \
        || { cat "$builddir/meson-setup.log"; exit 1; }
elif [ $# -gt 0 ]; then
    meson configure "$builddir" "$@" >/dev/null
fi
ninja -C "$builddir" >"$builddir/ninja.log" 2>&1 || { tail -n 60 "$builddir/ninja.log"; exit 1; }
echo "built: $builddir/src/libkokkos_ompt_bridge.so"
