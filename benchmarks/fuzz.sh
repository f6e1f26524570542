#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ for as long as asked, each on a scratch copy of its
# seed corpus, and prints the executions done and any crash, timeout or leak input found (kept in
# the output directory; tests/fuzz/README.md says what to do with one).
#   benchmarks/fuzz.sh [--build DIR] [--out DIR] SECONDS [TARGET...]
# TARGET: raw_convert, options, output_name, name_escape (default: all, one after the other).
# DIR defaults to build-fuzz (configured with clang, -Dfuzz=true, the default); it is built first.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build-fuzz
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: benchmarks/fuzz.sh [--build DIR] [--out DIR] SECONDS [TARGET...]" >&2
    exit 2
fi
seconds=$1
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(raw_convert options output_name name_escape)
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/kob-fuzz.XXXXXX")
mkdir -p "$out"
ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}" >"$out/ninja.log" 2>&1 || { tail -n 40 "$out/ninja.log"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for t in "${targets[@]}"; do
    corpus="$out/$t/corpus"
    mkdir -p "$corpus" "$out/$t/found"
    cp tests/fuzz/corpus/"$t"/* "$corpus"/
    extra=()
    [ "$t" = raw_convert ] && extra=(-close_fd_mask=2)
    # Fork mode (one child at a time) goes on past a finding: each input is kept in found/.
    "$build/tests/fuzz/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
        -artifact_prefix="$out/$t/found/" "${extra[@]}" "$corpus" >"$out/$t/log" 2>&1
    rc=$?
    # The parent's progress lines: "#EXECUTIONS: cov: ... oom/timeout/crash: A/B/C ...".
    execs=$(grep -oE '^#[0-9]+:' "$out/$t/log" | tail -n 1 | tr -dc '0-9')
    found=$(ls "$out/$t/found")
    echo "$t: ${execs:-?} executions in ${seconds} s, corpus $(ls "$corpus" | wc -l) inputs, exit $rc"
    for f in $found; do
        echo "  found: $out/$t/found/$f"
        status=1
    done
    [ $rc -ne 0 ] && status=1
    grep -E 'ERROR|SUMMARY|terminate|property failed' "$out/$t/log" | sort | uniq -c | head -n 10 | sed 's/^/  /'
done
echo "logs and corpora: $out"
exit $status
