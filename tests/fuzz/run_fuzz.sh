#!/bin/sh
# Runs one fuzz target over its seed corpus for a fixed number of runs, with a fixed seed: a
# scratch directory comes first so that what libFuzzer adds to the corpus never lands in the
# committed seeds. Usage: run_fuzz.sh TARGET SEED_DIR RUNS [LIBFUZZER_FLAGS...]
set -eu
target=$1 seeds=$2 runs=$3
shift 3
case "$target" in */*) ;; *) target=./$target ;; esac
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kob-fuzz-corpus.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$target" -runs="$runs" -seed=1 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 "$@" \
    "$scratch" "$seeds"
