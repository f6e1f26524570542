#!/usr/bin/env bash
# benchmarks/run_ompt.sh - what the OMPT side of libkokkos_ompt_bridge.so costs, against no tool
# and against empty tools, on
#   empty_parallel       N empty `#pragma omp parallel` regions (benchmarks/empty_parallel.cpp,
#                        clang++ -fopenmp=libomp); configurations: no tool, the empty OMPT tool
#                        (libkob_empty_ompt_tool.so: our host callbacks, empty), our library
#                        (OMP_TOOL_LIBRARIES);
#   tiny_kernels_openmp  N tiny Kokkos kernels on the OpenMP-backend Kokkos 3.4.1
#                        (benchmarks/tiny_kernels.cpp); configurations: no tool, the empty Kokkos
#                        tool, the empty Kokkos tool + the empty OMPT tool (the baseline: it pays
#                        the runtime's own OMPT dispatch), our library (KOKKOS_PROFILE_LIBRARY and
#                        OMP_TOOL_LIBRARIES).
# Our library runs with KOB_ARGS="--quiet --output=OUT/... --format=json" (json: the summary only;
# it is written after the timed loop anyway).
#
#   (a) wall clock: ns per region / kernel, median of --runs runs (configurations interleaved),
#       for each --wall setting THREADS:BLOCKTIME (OMP_NUM_THREADS, KMP_BLOCKTIME), plus the
#       minor page faults per 1000 regions / kernels taken during the loop;
#   (b) instructions: valgrind --tool=callgrind --toggle-collect='launch_loop*' with
#       OMP_NUM_THREADS=1 KMP_BLOCKTIME=0 (only launch_loop and what it calls is counted): Ir per
#       region / kernel, and the inclusive Ir of each of our callbacks (on_*) and Kokkos hooks
#       (kokkosp_*) per region / kernel and per call, against the budget of 80 instructions per
#       OMPT callback (one thread), and 150 + 8 x 80 ~ 800 per OpenMP-backend kernel;
#   (c) instructions with OMP_NUM_THREADS=2 KMP_BLOCKTIME=0 (barrier callbacks, worker threads):
#       our library only, whole program collected, runs with --cg-mt-n and twice as many
#       regions / kernels; the difference gives exact per-region / per-kernel figures.
#
# Usage: benchmarks/run_ompt.sh [options]
#   --builddir DIR   meson build directory (default: build). Created if it does not exist with
#                    `CXX=clang++-22 meson setup DIR -Dbenchmarks=true` (plus
#                    -Dkokkos_openmp=build/deps/kokkos-openmp when DIR is not build and that exists)
#   --no-build       do not run meson/ninja; the targets must already be built
#   --runs N         wall-clock runs per configuration and setting (default 5)
#   --n N            regions / kernels per wall-clock run with one thread (default 1000000)
#   --n-mt N         regions / kernels per wall-clock run with more threads (default 100000)
#   --wall LIST      wall-clock settings THREADS:BLOCKTIME (default "1:0 2:0 2:200"; 200 ms is
#                    libomp's default block time: workers spin between regions instead of sleeping)
#   --cg-n N         regions / kernels under callgrind (default 20000)
#   --cg-mt-n N      (c) with N and 2N regions / kernels (default 2000); --no-cg-mt skips (c)
#   --lib PATH       measure this build of libkokkos_ompt_bridge.so instead of DIR's
#   --no-kokkos      only empty_parallel (no OpenMP-backend Kokkos needed)
#   --lines          also profile a DWARF 4 debug-info copy of the library (benchmarks/
#                    debuginfo_build.sh, in --debug-builddir) and print the cost per source line
#   --debug-builddir DIR   (default: /tmp/kob-bench-debuginfo)
#   --out DIR        where profiles and the tool's output go (default: a new /tmp/kob-bench-ompt.*)
#
# By default it builds the five targets it runs (ninja -C DIR benchmarks/empty_parallel
# benchmarks/libkob_empty_ompt_tool.so benchmarks/libkob_empty_tool.so
# benchmarks/tiny_kernels_openmp src/libkokkos_ompt_bridge.so). Needs valgrind, python3, clang
# with libomp and, for tiny_kernels_openmp, scripts/setup.sh's OpenMP-backend Kokkos.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
builddir=build
do_build=1
runs=5
n1=1000000
nmt=100000
wall="1:0 2:0 2:200"
cg_n=20000
cg_mt_n=2000
cg_mt=1
lib=""
kokkos=1
lines=0
debugdir=/tmp/kob-bench-debuginfo
out=""

die() { echo "run_ompt.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --builddir) builddir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --runs) runs=$2; shift 2 ;;
    --n) n1=$2; shift 2 ;;
    --n-mt) nmt=$2; shift 2 ;;
    --wall) wall=$2; shift 2 ;;
    --cg-n) cg_n=$2; shift 2 ;;
    --cg-mt-n) cg_mt_n=$2; shift 2 ;;
    --no-cg-mt) cg_mt=0; shift ;;
    --lib) lib=$2; shift 2 ;;
    --no-kokkos) kokkos=0; shift ;;
    --lines) lines=1; shift ;;
    --debug-builddir) debugdir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

source "$here/common.sh"

if [ "$do_build" = 1 ]; then
  command -v meson >/dev/null || die "meson is needed"
  if [ ! -f "$builddir/build.ninja" ]; then
    extra=()
    if [ "$(realpath -m "$builddir")" != "$(realpath -m build)" ] && [ -f build/deps/kokkos-openmp/include/Kokkos_Core.hpp ]; then
      extra+=(-Dkokkos_openmp="$root/build/deps/kokkos-openmp")
    fi
    CXX=${CXX:-clang++-22} meson setup "$builddir" -Dbenchmarks=true "${extra[@]}" >&2
  elif [ "$(option_value "$builddir" benchmarks)" != "true" ]; then
    meson configure "$builddir" -Dbenchmarks=true >&2
  fi
  targets=(benchmarks/empty_parallel benchmarks/libkob_empty_ompt_tool.so)
  [ "$kokkos" = 1 ] && targets+=(benchmarks/libkob_empty_tool.so benchmarks/tiny_kernels_openmp)
  [ -z "$lib" ] && targets+=(src/libkokkos_ompt_bridge.so)
  ninja -C "$builddir" "${targets[@]}" >&2 ||
    die "build failed (tiny_kernels_openmp needs scripts/setup.sh's OpenMP-backend Kokkos; --no-kokkos skips it)"
fi

par_exe=$(realpath "$builddir/benchmarks/empty_parallel")
empty_ompt=$(realpath "$builddir/benchmarks/libkob_empty_ompt_tool.so")
ours=$(realpath "${lib:-$builddir/src/libkokkos_ompt_bridge.so}")
[ -x "$par_exe" ] || die "$par_exe is missing: it needs clang (-fopenmp=libomp) and -Dbenchmarks=true"
[ -f "$empty_ompt" ] || die "$empty_ompt is missing"
[ -f "$ours" ] || die "$ours is missing"
benches=(par)
if [ "$kokkos" = 1 ]; then
  kk_exe=$(realpath "$builddir/benchmarks/tiny_kernels_openmp")
  empty_kokkos=$(realpath "$builddir/benchmarks/libkob_empty_tool.so")
  [ -x "$kk_exe" ] || die "$kk_exe is missing: it needs scripts/setup.sh's OpenMP-backend Kokkos (or use --no-kokkos)"
  [ -f "$empty_kokkos" ] || die "$empty_kokkos is missing"
  benches+=(kk)
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/kob-bench-ompt.XXXXXX)
mkdir -p "$out"
out=$(realpath "$out")

declare -A exe=([par]="$par_exe" [kk]="${kk_exe:-}")
declare -A unit=([par]=region [kk]=kernel)
declare -A bench_configs=([par]="none empty_ompt ours" [kk]="none empty_kokkos empty_both ours")
declare -A baseline=([par]=empty_ompt [kk]=empty_both)
declare -A label=(
  [none]="no tool"
  [empty_ompt]="empty OMPT tool (libkob_empty_ompt_tool.so)"
  [empty_kokkos]="empty Kokkos tool (libkob_empty_tool.so), no OMPT tool"
  [empty_both]="empty Kokkos tool + empty OMPT tool"
  [ours]="libkokkos_ompt_bridge.so"
)

# run_config BENCH CONFIG PREFIX COMMAND...: runs COMMAND with the tools of CONFIG loaded.
run_config() {
  local bench=$1 config=$2 prefix=$3
  shift 3
  local clean=(env -u OMP_TOOL_LIBRARIES -u KOKKOS_PROFILE_LIBRARY -u KOKKOS_TOOLS_LIBS -u KOKKOS_TOOLS_ARGS -u KOB_ARGS OMP_TOOL=enabled)
  case "$config" in
    none) "${clean[@]}" "$@" ;;
    empty_ompt) "${clean[@]}" OMP_TOOL_LIBRARIES="$empty_ompt" "$@" ;;
    empty_kokkos) "${clean[@]}" KOKKOS_PROFILE_LIBRARY="$empty_kokkos" KOB_EMPTY_TOOL_GLOBAL_FENCING=0 "$@" ;;
    empty_both) "${clean[@]}" KOKKOS_PROFILE_LIBRARY="$empty_kokkos" KOB_EMPTY_TOOL_GLOBAL_FENCING=0 OMP_TOOL_LIBRARIES="$empty_ompt" "$@" ;;
    ours)
      if [ "$bench" = kk ]; then
        "${clean[@]}" KOKKOS_PROFILE_LIBRARY="$ours" OMP_TOOL_LIBRARIES="$ours" KOB_ARGS="--quiet --output=$prefix ${KOB_BENCH_FORMAT:-}" "$@"
      else
        "${clean[@]}" OMP_TOOL_LIBRARIES="$ours" KOB_ARGS="--quiet --output=$prefix ${KOB_BENCH_FORMAT:-}" "$@"
      fi ;;
  esac
}

minimum() { sort -g | head -1; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }
delta() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "nan" || b == "nan") print "nan"; else printf "%+.1f", a - b}'; }

# (a) wall clock
declare -A ns ns_min faults
read -r first_setting _ <<<"$wall"
for setting in $wall; do
  threads=${setting%%:*}
  blocktime=${setting#*:}
  [ "$threads" = 1 ] && n=$n1 || n=$nmt
  echo "wall clock, OMP_NUM_THREADS=$threads KMP_BLOCKTIME=$blocktime: $runs runs x ${#benches[@]} programs x $n ..." >&2
  for ((r = 1; r <= runs; ++r)); do
    for b in "${benches[@]}"; do
      for c in ${bench_configs[$b]}; do
        log="$out/wall-$b-$c-$setting-$r.txt"
        prefix="$out/$b-ours-wall-$setting-$r"
        OMP_NUM_THREADS=$threads KMP_BLOCKTIME=$blocktime KOB_BENCH_FORMAT=--format=json \
          run_config "$b" "$c" "$prefix" "${exe[$b]}" "$n" >"$log" 2>&1 ||
          { cat "$log" >&2; die "$(basename "${exe[$b]}") failed ($c, $setting)"; }
        if [ "$b" = par ]; then
          got=$(sed -n 's/^threads: //p' "$log")
          [ "$got" = "$threads" ] || die "empty_parallel ran $got threads, not $threads ($log)"
        fi
        if [ "$c" = ours ]; then
          dropped=$(sed -n 's/.*"dropped_events":\([0-9]*\).*/\1/p' "$prefix.summary.json" | head -1)
          [ "${dropped:-0}" = 0 ] || echo "run_ompt.sh: warning: our library dropped $dropped events in $log (memory cap)" >&2
        fi
      done
    done
  done
  for b in "${benches[@]}"; do
    for c in ${bench_configs[$b]}; do
      ns[$b,$c,$setting]=$(cat "$out"/wall-"$b"-"$c"-"$setting"-*.txt | sed -n 's/^ns per \(region\|kernel\): //p' | median)
      ns_min[$b,$c,$setting]=$(cat "$out"/wall-"$b"-"$c"-"$setting"-*.txt | sed -n 's/^ns per \(region\|kernel\): //p' | minimum)
      faults[$b,$c,$setting]=$(cat "$out"/wall-"$b"-"$c"-"$setting"-*.txt | sed -n 's/^page faults per 1000 \(regions\|kernels\): //p' | median)
    done
  done
done

# (b) instructions under callgrind, one thread, launch_loop and its callees only
echo "callgrind (OMP_NUM_THREADS=1 KMP_BLOCKTIME=0): $cg_n regions / kernels per configuration ..." >&2
declare -A ir
for b in "${benches[@]}"; do
  for c in ${bench_configs[$b]}; do
    prof="$out/cg-$b-$c.out"
    OMP_NUM_THREADS=1 KMP_BLOCKTIME=0 KOB_BENCH_FORMAT=--format=json \
      run_config "$b" "$c" "$out/$b-ours-cg" valgrind --tool=callgrind --toggle-collect='launch_loop*' \
      --callgrind-out-file="$prof" "${exe[$b]}" "$cg_n" >"$out/cg-$b-$c.txt" 2>&1 ||
      { cat "$out/cg-$b-$c.txt" >&2; die "valgrind failed ($b, $c)"; }
    total=$(sed -n 's/^totals: //p' "$prof")
    [ -n "$total" ] && [ "$total" -gt 0 ] ||
      die "callgrind collected nothing for $b $c: does --toggle-collect='launch_loop*' match? (nm -C ${exe[$b]} | grep launch_loop)"
    ir[$b,$c]=$(awk -v t="$total" -v n="$cg_n" 'BEGIN {printf "%.1f", t / n}')
  done
done

# (c) instructions with two threads, by difference of two whole-program profiles
if [ "$cg_mt" = 1 ]; then
  echo "callgrind (OMP_NUM_THREADS=2 KMP_BLOCKTIME=0): our library, $cg_mt_n and $((2 * cg_mt_n)) regions / kernels ..." >&2
  for b in "${benches[@]}"; do
    for m in "$cg_mt_n" "$((2 * cg_mt_n))"; do
      OMP_NUM_THREADS=2 KMP_BLOCKTIME=0 KOB_BENCH_FORMAT=--format=json \
        run_config "$b" ours "$out/$b-ours-cgmt" valgrind --tool=callgrind --callgrind-out-file="$out/cgmt-$b-ours-$m.out" \
        "${exe[$b]}" "$m" >"$out/cgmt-$b-ours-$m.txt" 2>&1 ||
        { cat "$out/cgmt-$b-ours-$m.txt" >&2; die "valgrind failed ($b, 2 threads, $m)"; }
    done
  done
fi

libomp=$(ldd "$par_exe" | awk '/libomp/ {print $3}' | head -1)
libomp_version=$(dpkg -S "$(realpath "$libomp")" 2>/dev/null | cut -d: -f1 | xargs -r dpkg-query -W -f='${Version}' 2>/dev/null || true)
clock_of() { [ -f "$1" ] && sed -n 's/.*"clock":"\([^"]*\)".*/\1/p' "$1" | head -1 || true; }

table() {  # table BENCH TITLE VERDICT
  local b=$1 u=${unit[$1]} base=${baseline[$1]}
  echo
  echo "## $2"
  echo
  local head="| configuration |" sep="|---|"
  for setting in $wall; do
    head+=" ns/$u, ${setting%%:*} thr. BT=${setting#*:}: median (min) |"
    sep+="---:|"
    if [ "$setting" = "$first_setting" ]; then
      head+=" Δ ns | page faults / 1000 |"
      sep+="---:|---:|"
    fi
  done
  head+=" Ir/$u (callgrind, 1 thr.) | Δ Ir vs ${label[$base]%% (*} |"
  sep+="---:|---:|"
  echo "$head"
  echo "$sep"
  for c in ${bench_configs[$b]}; do
    local row="| ${label[$c]} |"
    for setting in $wall; do
      row+=" ${ns[$b,$c,$setting]} (${ns_min[$b,$c,$setting]}) |"
      if [ "$setting" = "$first_setting" ]; then
        row+=" $(delta "${ns[$b,$c,$setting]}" "${ns[$b,$base,$setting]}") | ${faults[$b,$c,$setting]} |"
      fi
    done
    row+=" ${ir[$b,$c]} | $(delta "${ir[$b,$c]}" "${ir[$b,$base]}") |"
    echo "$row"
  done
  echo
  echo "Wall clock: median of $runs runs, $n1 ${u}s per run with 1 thread, $nmt with more (thr. = OMP_NUM_THREADS, BT = KMP_BLOCKTIME, ms); Δ ns (medians) is against the ${label[$base]%% (*} with the first setting. Ir: $cg_n ${u}s, --toggle-collect='launch_loop*', OMP_NUM_THREADS=1 KMP_BLOCKTIME=0."
  echo
  echo "$3"
  echo
  echo "### Our callbacks per $u (callgrind, 1 thread)"
  echo
  python3 "$here/callgrind_report.py" callbacks "$out/cg-$b-ours.out" "$cg_n" "$out/cg-$b-$base.out" --unit="$u" --budget=80
  echo
  echo "Ir per call is the mean over all calls of the function (an on_* function serves both endpoints of its event)."
  if [ "$cg_mt" = 1 ]; then
    echo
    echo "### Our callbacks per $u, 2 threads (callgrind, OMP_NUM_THREADS=2 KMP_BLOCKTIME=0, all threads: profile of $((2 * cg_mt_n)) minus profile of $cg_mt_n ${u}s)"
    echo
    python3 "$here/callgrind_report.py" callbacks "$out/cgmt-$b-ours-$((2 * cg_mt_n)).out" "$cg_mt_n" --unit="$u" --budget=80 \
      --minus="$out/cgmt-$b-ours-$cg_mt_n.out"
  fi
}

echo
echo "# OMPT benchmarks (libomp ${libomp_version:-?} at $libomp; our library: $ours)"
d=$(awk -v a="${ir[par,ours]}" -v b="${ir[par,empty_ompt]}" 'BEGIN {printf "%.1f", a - b}')
table par "empty_parallel: cost per empty \`#pragma omp parallel\` region" "**ours minus empty OMPT tool: $d instructions per region.**"
if [ "$kokkos" = 1 ]; then
  kokkos_dir=$(option_value "$builddir" kokkos_openmp | tr -d '"')
  [ -n "$kokkos_dir" ] || kokkos_dir=$builddir/deps/kokkos-openmp
  kokkos_version=$(sed -n 's/^#define KOKKOS_VERSION //p' "$kokkos_dir/include/KokkosCore_config.h" 2>/dev/null || true)
  verdict=$(awk -v o="${ir[kk,ours]}" -v eb="${ir[kk,empty_both]}" -v ek="${ir[kk,empty_kokkos]}" 'BEGIN {
    d1 = o - eb; d2 = o - ek
    printf "**ours minus (empty Kokkos tool + empty OMPT tool): %.1f instructions per kernel; budget ~800 (150 for the kernel hooks + ~8 callbacks x 80): %s.**\n", d1, (d1 <= 800 ? "within budget" : sprintf("OVER by %.1f", d1 - 800))
    printf "ours minus the empty Kokkos tool alone: %.1f (%s), of which %.1f is the OpenMP runtime'\''s own OMPT dispatch (empty OMPT tool attached vs none).\n", d2, (d2 <= 800 ? "also within 800" : sprintf("OVER 800 by %.1f", d2 - 800)), eb - ek
  }')
  table kk "tiny_kernels_openmp: cost per tiny OpenMP-backend Kokkos kernel (Kokkos ${kokkos_version:-?}, clang, -O3)" "$verdict"
fi
echo
echo "Clock our library used: natively \"$(clock_of "$(ls "$out"/par-ours-wall-*.summary.json 2>/dev/null | head -1)")\", under valgrind \"$(clock_of "$out/par-ours-cg.summary.json")\"."

if [ "$lines" = 1 ]; then
  dbg_lib=$("$here/debuginfo_build.sh" "$builddir" "$debugdir") || die "cannot build the debug-info copy in $debugdir"
  for b in "${benches[@]}"; do
    prof="$out/cg-$b-ours-debuginfo.out"
    if [ "$b" = kk ]; then
      env -u KOKKOS_TOOLS_LIBS -u KOKKOS_TOOLS_ARGS OMP_TOOL=enabled OMP_NUM_THREADS=1 KMP_BLOCKTIME=0 \
        KOKKOS_PROFILE_LIBRARY="$dbg_lib" OMP_TOOL_LIBRARIES="$dbg_lib" KOB_ARGS="--quiet --output=$out/$b-ours-dbg --format=json" \
        valgrind --tool=callgrind --toggle-collect='launch_loop*' --callgrind-out-file="$prof" "${exe[$b]}" "$cg_n" \
        >"$out/cg-$b-ours-debuginfo.txt" 2>&1 || { cat "$out/cg-$b-ours-debuginfo.txt" >&2; die "valgrind failed (debug info)"; }
    else
      env -u KOKKOS_PROFILE_LIBRARY -u KOKKOS_TOOLS_LIBS OMP_TOOL=enabled OMP_NUM_THREADS=1 KMP_BLOCKTIME=0 \
        OMP_TOOL_LIBRARIES="$dbg_lib" KOB_ARGS="--quiet --output=$out/$b-ours-dbg --format=json" \
        valgrind --tool=callgrind --toggle-collect='launch_loop*' --callgrind-out-file="$prof" "${exe[$b]}" "$cg_n" \
        >"$out/cg-$b-ours-debuginfo.txt" 2>&1 || { cat "$out/cg-$b-ours-debuginfo.txt" >&2; die "valgrind failed (debug info)"; }
    fi
    dbg_ir=$(awk -v t="$(sed -n 's/^totals: //p' "$prof")" -v n="$cg_n" 'BEGIN {printf "%.1f", t / n}')
    echo
    echo "### $(basename "${exe[$b]}"): per source line ($dbg_lib: $dbg_ir Ir/${unit[$b]}, vs ${ir[$b,ours]} for the measured build)"
    echo
    python3 "$here/callgrind_report.py" lines "$prof" "$cg_n"
  done
fi
echo
echo "Profiles and logs: $out (callgrind_annotate --inclusive=yes $out/cg-par-ours.out)"
