#!/usr/bin/env bash
# benchmarks/debuginfo_build.sh BUILDDIR DEBUGDIR - builds, in DEBUGDIR, a copy of BUILDDIR's
# libkokkos_ompt_bridge.so with DWARF 4 debug info (valgrind 3.19 cannot read clang 22's default
# DWARF 5), with the same compiler, optimisation and NDEBUG setting, and prints its path. Used by
# run.sh --lines and run_ompt.sh --lines for per-source-line instruction counts. Build output
# goes to stderr.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILDDIR DEBUGDIR" >&2; exit 2; }
builddir=$1
debugdir=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

option_value() {  # option_value NAME: the value of a meson option of BUILDDIR, as JSON text
  python3 - "$builddir" "$1" <<'PY'
import json, sys
for o in json.load(open(sys.argv[1] + "/meson-info/intro-buildoptions.json")):
    if o["name"] == sys.argv[2]:
        print(json.dumps(o["value"]))
PY
}

cxx_exe=$(python3 - "$builddir" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1] + "/meson-info/intro-targets.json")):
    if t["name"] == "kokkos_ompt_bridge":
        print(" ".join(next(s["compiler"] for s in t["target_sources"] if s.get("language") == "cpp")))
        break
PY
)
[ -n "$cxx_exe" ] || { echo "debuginfo_build.sh: cannot tell which compiler built the library in $builddir" >&2; exit 1; }
cpp_args=$(option_value cpp_args | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin) + ["-gdwarf-4"]))')
optimization=$(option_value optimization | tr -d '"')
ndebug=$(option_value b_ndebug | tr -d '"')
[ "$ndebug" = if-release ] && ndebug=true  # the measured build is a release build
if [ ! -f "$debugdir/build.ninja" ]; then
  CXX="$cxx_exe" meson setup "$debugdir" "$root" -Doptimization="$optimization" -Ddebug=false \
    -Db_ndebug="$ndebug" -Dcpp_args="$cpp_args" -Dsamples=false -Dtests=false -Dbenchmarks=false >&2
fi
ninja -C "$debugdir" src/libkokkos_ompt_bridge.so >&2
realpath "$debugdir/src/libkokkos_ompt_bridge.so"
