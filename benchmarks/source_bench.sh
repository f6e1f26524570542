#!/usr/bin/env bash
# The cost of source locations at conversion (issue 19, item 6): raw traces of N OpenMP parallel
# regions outside kernels whose code addresses take D distinct values in a real module with DWARF
# (benchmarks/source_addresses.cpp), converted with `kob convert --to=perfetto,summary,json`; the
# same events without the module map (addresses left as numbers, no DWARF read) show the price of
# the names alone. CPU time (user + sys) and peak RSS: the median of RUNS runs.
#   benchmarks/source_bench.sh [--builddir build-bench] [--module FILE] [--regions N] [--runs R]
#                              [--base-kob OLD_KOB]
# --base-kob: a kob of raw format 2 (before code addresses) converts the same events (the file's
# version byte set to 2; its `module` entries are facts it ignores) for the "before" column.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=build-bench module=build-asan/src/libkokkos_ompt_bridge.so regions=1000000 runs=3 base_kob=
while [ $# -gt 0 ]; do
    case "$1" in
        --builddir) builddir=$2; shift 2 ;;
        --module) module=$2; shift 2 ;;
        --regions) regions=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --base-kob) base_kob=$2; shift 2 ;;
        *) echo "source_bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
maker=$builddir/benchmarks/source_addresses kob=$builddir/src/kob
[ -x "$maker" ] && [ -x "$kob" ] || { echo "source_bench.sh: build $builddir with -Dbenchmarks=true first" >&2; exit 1; }
[ -f "$module" ] || { echo "source_bench.sh: no module $module (a file with DWARF; scripts/test.sh builds build-asan)" >&2; exit 1; }
work=$(mktemp -d /tmp/kob-source-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

# median CPU seconds and peak KB of converting $2 with kob $1
measure() {
    local k=$1 f=$2 i
    for i in $(seq "$runs"); do
        /usr/bin/time -f "%U %S %M" -o "$work/t" "$k" convert "$f" --to=perfetto,summary,json -o "$work/out" >/dev/null 2>&1
        awk '{printf "%.3f %d\n", $1 + $2, $3}' "$work/t"
    done | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) {print}'
}

printf '| distinct addresses | module map | kob (after): CPU s, peak MB | .pftrace MB |%s\n' "${base_kob:+ before: CPU s, peak MB | before .pftrace MB |}"
printf '|---|---|---|---|%s\n' "${base_kob:+---|---|}"
for d in 1 100 100000; do
    for mode in with without; do
        f=$work/d$d-$mode.kob
        "$maker" "$f" "$regions" "$d" "$module" $([ $mode = without ] && echo --no-modules)
        read -r cpu kb < <(measure "$kob" "$f")
        size=$(stat -c %s "$work/out.pftrace")
        row="| $d | $mode | $cpu, $((kb / 1024)) | $((size / 1000000)) |"
        if [ -n "$base_kob" ] && [ $mode = with ]; then
            cp "$f" "$work/v2.kob"
            printf '\x02' | dd of="$work/v2.kob" bs=1 seek=8 conv=notrunc status=none
            read -r bcpu bkb < <(measure "$base_kob" "$work/v2.kob")
            row="$row $bcpu, $((bkb / 1024)) | $(($(stat -c %s "$work/out.pftrace") / 1000000)) |"
        elif [ -n "$base_kob" ]; then
            row="$row (same events) | |"
        fi
        echo "$row"
    done
done
