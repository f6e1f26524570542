#!/usr/bin/env bash
# benchmarks/run.sh - what a tiny Kokkos kernel costs with no tool, with an empty tool and with
# libkokkos_ompt_bridge.so, on Debian's Serial Kokkos 3.4.1 (benchmarks/tiny_kernels.cpp built
# with g++ as tiny_kernels_serial).
#
#   (a) wall clock: "ns per kernel" of 1,000,000 launches, median of 5 runs per configuration
#       (runs interleaved), plus the minor page faults taken during the loop;
#   (b) instructions: valgrind --tool=callgrind --toggle-collect='launch_loop*' on 20,000
#       launches (only launch_loop(int, int*) and what it calls is counted), Ir per kernel.
# Prints a markdown table, "ours minus empty tool" per kernel (begin + end hook) against the
# budget of 150 instructions, the clock our library used, and where our instructions go.
#
# Usage: benchmarks/run.sh [options]
#   --builddir DIR   meson build directory (default: build). Created with
#                    `CXX=clang++-22 meson setup DIR -Dbenchmarks=true` if it does not exist.
#   --no-build       do not run meson/ninja; the targets must already be built
#   --runs N         wall-clock runs per configuration (default 5)
#   --kernels N      launches per wall-clock run (default 1000000)
#   --cg-kernels N   launches under callgrind (default 20000)
#   --lib PATH       measure this build of libkokkos_ompt_bridge.so instead of DIR's
#   --lines          also build a copy of the library with DWARF 4 debug info (valgrind 3.19
#                    cannot read clang 22's default DWARF 5) in --debug-builddir, same
#                    optimisation, and print our hooks' cost per source line
#   --debug-builddir DIR   (default: /tmp/kob-bench-debuginfo)
#   --out DIR        where profiles and the tool's output go (default: a new /tmp/kob-bench.*)
#   --ompt           then run benchmarks/run_ompt.sh (same --builddir, --no-build, --lib, --lines,
#                    --debug-builddir; its output in DIR/ompt)
#   --ompt-args ...  the remaining arguments go to run_ompt.sh (implies --ompt)
#
# By default it builds what it needs, i.e. the equivalent of
#   meson configure build -Dbenchmarks=true && ninja -C build
# restricted to the three targets it runs (so that unrelated targets being edited elsewhere do
# not stop it). Needs valgrind, python3, g++ and libtrilinos-kokkos-dev.
#
# The OpenMP side (OMPT callbacks on empty parallel regions and on OpenMP-backend Kokkos kernels)
# is measured by benchmarks/run_ompt.sh; `benchmarks/run.sh --ompt` runs it after this one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
builddir=build
do_build=1
runs=5
kernels=1000000
cg_kernels=20000
lib=""
lines=0
debugdir=/tmp/kob-bench-debuginfo
out=""
ompt=0
ompt_args=()

die() { echo "run.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --builddir) builddir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --runs) runs=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --cg-kernels) cg_kernels=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --lines) lines=1; shift ;;
    --debug-builddir) debugdir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ompt) ompt=1; shift ;;
    --ompt-args) ompt=1; shift; ompt_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

source "$here/common.sh"

if [ "$do_build" = 1 ]; then
  command -v meson >/dev/null || die "meson is needed"
  if [ ! -f "$builddir/build.ninja" ]; then
    CXX=${CXX:-clang++-22} meson setup "$builddir" -Dbenchmarks=true
  elif [ "$(option_value "$builddir" benchmarks)" != "true" ]; then
    meson configure "$builddir" -Dbenchmarks=true
  fi
  targets=(benchmarks/tiny_kernels_serial benchmarks/libkob_empty_tool.so)
  [ -z "$lib" ] && targets+=(src/libkokkos_ompt_bridge.so)
  ninja -C "$builddir" "${targets[@]}" >&2
fi

exe=$(realpath "$builddir/benchmarks/tiny_kernels_serial")
empty=$(realpath "$builddir/benchmarks/libkob_empty_tool.so")
ours=$(realpath "${lib:-$builddir/src/libkokkos_ompt_bridge.so}")
[ -x "$exe" ] || die "$exe is missing: it needs g++ and libtrilinos-kokkos-dev, and -Dbenchmarks=true"
[ -f "$empty" ] || die "$empty is missing"
[ -f "$ours" ] || die "$ours is missing"
[ -n "$out" ] || out=$(mktemp -d /tmp/kob-bench.XXXXXX)
mkdir -p "$out"
out=$(realpath "$out")

configs=(none empty empty_fenced ours)
declare -A label=(
  [none]="no tool"
  [empty]="empty tool (libkob_empty_tool.so)"
  [empty_fenced]="empty tool, Kokkos' default global fencing"
  [ours]="libkokkos_ompt_bridge.so"
)

# run_config CONFIG PREFIX COMMAND...: runs COMMAND with the tool of CONFIG loaded. Our library
# is told to be quiet and to write PREFIX.* (json only for wall-clock runs: a 1M-kernel Chrome
# trace is ~190 MB and is written after the timed loop anyway).
run_config() {
  local config=$1 prefix=$2
  shift 2
  case "$config" in
    none) env -u KOKKOS_PROFILE_LIBRARY -u KOKKOS_TOOLS_LIBS "$@" ;;
    empty) env -u KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY="$empty" KOB_EMPTY_TOOL_GLOBAL_FENCING=0 "$@" ;;
    empty_fenced) env -u KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY="$empty" KOB_EMPTY_TOOL_GLOBAL_FENCING=1 "$@" ;;
    ours) env -u KOKKOS_TOOLS_LIBS -u KOKKOS_TOOLS_ARGS KOKKOS_PROFILE_LIBRARY="$ours" KOB_ARGS="--quiet --output=$prefix ${KOB_BENCH_FORMAT:-}" "$@" ;;
  esac
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }

# (a) wall clock
echo "wall clock: $runs runs x ${#configs[@]} configurations x $kernels kernels ..." >&2
for ((r = 1; r <= runs; ++r)); do
  for c in "${configs[@]}"; do
    log="$out/wall-$c-$r.txt"
    KOB_BENCH_FORMAT=--format=json run_config "$c" "$out/ours-wall" "$exe" "$kernels" >"$log" 2>&1 ||
      { cat "$log" >&2; die "tiny_kernels_serial failed ($c)"; }
  done
done
declare -A ns faults
for c in "${configs[@]}"; do
  ns[$c]=$(cat "$out"/wall-"$c"-*.txt | sed -n 's/^ns per kernel: //p' | median)
  faults[$c]=$(cat "$out"/wall-"$c"-*.txt | sed -n 's/^page faults per 1000 kernels: //p' | median)
done

# (b) instructions under callgrind, launch_loop(int, int*) and its callees only
echo "callgrind: ${#configs[@]} configurations x $cg_kernels kernels ..." >&2
declare -A ir
for c in "${configs[@]}"; do
  prof="$out/cg-$c.out"
  run_config "$c" "$out/ours-cg" valgrind --tool=callgrind --toggle-collect='launch_loop*' \
    --callgrind-out-file="$prof" "$exe" "$cg_kernels" >"$out/cg-$c.txt" 2>&1 ||
    { cat "$out/cg-$c.txt" >&2; die "valgrind failed ($c)"; }
  total=$(sed -n 's/^totals: //p' "$prof")
  [ -n "$total" ] && [ "$total" -gt 0 ] ||
    die "callgrind collected nothing for $c: does --toggle-collect='launch_loop*' match? (nm -C $exe | grep launch_loop)"
  ir[$c]=$(awk -v t="$total" -v n="$cg_kernels" 'BEGIN {printf "%.1f", t / n}')
done

delta() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.1f", a - b}'; }
clock_of() { [ -f "$1" ] && sed -n 's/.*"clock":"\([^"]*\)".*/\1/p' "$1" | head -1 || true; }

echo
echo "## tiny_kernels_serial: cost per kernel (Kokkos $(sed -n 's/^#define KOKKOS_VERSION //p' /usr/include/trilinos/KokkosCore_config.h 2>/dev/null || echo '?'), Serial, g++ -O2)"
echo
echo "| configuration | ns/kernel (median of $runs) | Δ ns vs empty tool | page faults / 1000 kernels | Ir/kernel (callgrind) | Δ Ir vs empty tool |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${configs[@]}"; do
  echo "| ${label[$c]} | ${ns[$c]} | $(delta "${ns[$c]}" "${ns[empty]}") | ${faults[$c]} | ${ir[$c]} | $(delta "${ir[$c]}" "${ir[empty]}") |"
done
echo
over=$(awk -v a="${ir[ours]}" -v b="${ir[empty]}" 'BEGIN {d = a - b; printf "%.1f instructions per kernel (begin + end hook); budget 150: %s", d, (d <= 150 ? "within budget" : sprintf("OVER by %.1f", d - 150))}')
echo "**ours minus empty tool: $over**"
echo
echo "Wall clock: $kernels kernels per run; Ir: $cg_kernels kernels, collection restricted with --toggle-collect='launch_loop*'."
echo "Our library: $ours"
if grep -q '^c\{0,1\}fn=.*strcmp' "$out/cg-ours.out"; then
  echo "Note: our count includes a strcmp (intern cache hit check), whose cost varies (about 20 to 37 Ir) with the stack address of Kokkos' temporary name string, so with the size of the environment; the other configurations do not call it."
fi
echo "Clock it used: natively \"$(clock_of "$out/ours-wall.summary.json")\", under valgrind \"$(clock_of "$out/ours-cg.summary.json")\" (otherData \"clock\")."
echo
echo "### Where our hooks' instructions go (callgrind, per kernel)"
echo
python3 "$here/callgrind_report.py" functions "$out/cg-ours.out" "$out/cg-empty.out" "$cg_kernels"

if [ "$lines" = 1 ]; then
  # The same library with debug info valgrind 3.19 can read (DWARF 4), same compiler and options.
  dbg_lib=$("$here/debuginfo_build.sh" "$builddir" "$debugdir") || die "cannot build the debug-info copy in $debugdir"
  prof="$out/cg-ours-debuginfo.out"
  env -u KOKKOS_TOOLS_LIBS -u KOKKOS_TOOLS_ARGS KOKKOS_PROFILE_LIBRARY="$dbg_lib" KOB_ARGS="--quiet --output=$out/ours-dbg" \
    valgrind --tool=callgrind --toggle-collect='launch_loop*' --callgrind-out-file="$prof" "$exe" "$cg_kernels" \
    >"$out/cg-ours-debuginfo.txt" 2>&1 || { cat "$out/cg-ours-debuginfo.txt" >&2; die "valgrind failed (debug info)"; }
  dbg_ir=$(awk -v t="$(sed -n 's/^totals: //p' "$prof")" -v n="$cg_kernels" 'BEGIN {printf "%.1f", t / n}')
  echo
  echo "### Per source line ($dbg_lib: $dbg_ir Ir/kernel, vs ${ir[ours]} for the measured build)"
  echo
  [ "$dbg_ir" = "${ir[ours]}" ] || echo "(not the measured build's count: compare the function tables. A small difference in the name check alone is expected: its page-cross test makes its cost depend on where Kokkos' temporary name string lies on the stack, i.e. on the size of the environment.)"
  echo
  python3 "$here/callgrind_report.py" lines "$prof" "$cg_kernels"
fi
echo
echo "Profiles and logs: $out (callgrind_annotate --inclusive=yes $out/cg-ours.out)"

if [ "$ompt" = 1 ]; then
  echo
  pass=(--builddir "$builddir" --out "$out/ompt" --debug-builddir "$debugdir")
  [ "$do_build" = 1 ] || pass+=(--no-build)
  [ -n "$lib" ] && pass+=(--lib "$lib")
  [ "$lines" = 1 ] && pass+=(--lines)
  "$here/run_ompt.sh" "${pass[@]}" "${ompt_args[@]}"
fi
