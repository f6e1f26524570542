#!/usr/bin/env bash
# Configures (once) and builds the project with clang++-22, in build/ or, with --sanitize, in
# build-asan/ (library, unit tests and our test programs built with -fsanitize=address,undefined
# against the shared sanitizer runtime; Kokkos from build/deps). --tsan configures build-tsan/
# (-fsanitize=thread) without building: its tests (suite tsan) build what they use. Other arguments go to
# `meson setup` (e.g. -Dbenchmarks=true).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=build
setup_args=()
configure_only=0
if [ "${1:-}" = "--sanitize" ]; then
    shift
    builddir=build-asan
    setup_args=(-Dsanitize=address,undefined -Dbuildtype=debugoptimized
                "-Dkokkos_openmp=$PWD/build/deps/kokkos-openmp" "-Dkokkos_openmptarget=$PWD/build/deps/kokkos-openmptarget")
elif [ "${1:-}" = "--tsan" ]; then
    # Configured only: `meson test -C build-tsan --suite tsan` builds what those tests need.
    shift
    builddir=build-tsan
    setup_args=(-Dsanitize=thread -Dbuildtype=debugoptimized -Dfuzz=false
                "-Dkokkos_openmp=$PWD/build/deps/kokkos-openmp" "-Dkokkos_openmptarget=$PWD/build/deps/kokkos-openmptarget")
    configure_only=1
fi
mkdir -p "$builddir"
if [ ! -f "$builddir/build.ninja" ]; then
    CXX=clang++-22 meson setup "$builddir" "${setup_args[@]}" "$@" >"$builddir/meson-setup.log" 2>&1 \
        || { cat "$builddir/meson-setup.log"; exit 1; }
elif [ $# -gt 0 ]; then
    meson configure "$builddir" "$@" >/dev/null
fi
[ "$configure_only" = 1 ] && { echo "configured: $builddir"; exit 0; }
ninja -C "$builddir" >"$builddir/ninja.log" 2>&1 || { tail -n 60 "$builddir/ninja.log"; exit 1; }
echo "built: $builddir/src/libkokkos_ompt_bridge.so"
