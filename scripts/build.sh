#!/usr/bin/env bash
# Configures (once) and builds the project with clang++-22, in build/ or, with --sanitize, in
# build-asan/ (library, unit tests and our test programs built with -fsanitize=address,undefined
# against the shared sanitizer runtime; Kokkos from build/deps). --tsan configures build-tsan/
# (-fsanitize=thread) without building: its tests (suite tsan) build what they use. --demo builds
# in build/ only what scripts/demo.sh runs (the library, kob and the two Kokkos samples). Other
# arguments go to `meson setup` (e.g. -Dbenchmarks=true). ninja's progress is shown as it builds
# (scripts/steps.sh); its output goes to BUILDDIR/ninja.log.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=steps.sh
. scripts/steps.sh
builddir=build
setup_args=()
configure_only=0
targets=()
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
elif [ "${1:-}" = "--demo" ]; then
    shift
    targets=(src/libkokkos_ompt_bridge.so src/kob samples/kokkos_sample samples/tuning_sample)
fi
mkdir -p "$builddir"
# Which of setup.sh's Kokkos builds exist: meson looks for them when it configures, so a build
# folder configured before one of them was made (by the demo's set-up, say) is configured again.
deps_state=$(for d in kokkos-openmp kokkos-openmptarget kokkos-unit-tests; do
    [ -f "build/deps/$d/.setup-stamp" ] && printf '%s %s\n' "$d" "$(cat "build/deps/$d/.setup-stamp")"; done || true)
if [ ! -f "$builddir/build.ninja" ]; then
    run_step "configuring $builddir (meson)" "$PWD/$builddir/meson-setup.log" \
        env CXX=clang++-22 meson setup "$builddir" "${setup_args[@]}" "$@"
elif [ "$deps_state" != "$(cat "$builddir/deps.state" 2>/dev/null)" ]; then
    run_step "configuring $builddir again (the Kokkos builds of setup.sh changed)" "$PWD/$builddir/meson-setup.log" \
        meson setup --reconfigure "$builddir" "$@"
elif [ $# -gt 0 ]; then
    meson configure "$builddir" "$@" >/dev/null
fi
printf '%s\n' "$deps_state" >"$builddir/deps.state"
[ "$configure_only" = 1 ] && { echo "configured: $builddir"; exit 0; }
what="the project"
[ ${#targets[@]} -gt 0 ] && what="what the demo runs (the library, the two samples, kob)"
: >"$builddir/ninja.log"
build_step "building $what in $builddir (ninja, clang++-22)" "$PWD/$builddir/ninja.log" ninja -C "$builddir" "${targets[@]}"
echo "built: $builddir/src/libkokkos_ompt_bridge.so"
