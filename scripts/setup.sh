#!/usr/bin/env bash
# Prepares a Debian 12 machine for building and testing this project:
#   1. installs the Debian packages the build and the tests need (only those missing);
#   2. fetches Kokkos 3.4.1 from Debian's `trilinos` source package (private apt configuration
#      under build/deps/apt, the system's /etc/apt is left alone) into build/deps/kokkos-src;
#   3. builds and installs Kokkos twice with clang++-22:
#        build/deps/kokkos-openmp        (OpenMP + Serial backends)
#        build/deps/kokkos-openmptarget  (OpenMPTarget backend, host offload x86_64-pc-linux-gnu)
#   4. builds a subset of Kokkos' own core unit tests against the first (build/deps/kokkos-unit-tests);
# Every step is skipped when its result is already there, so a second run takes seconds.
# --demo: only what scripts/demo.sh runs (steps 1, 2 and the OpenMP Kokkos); the OpenMPTarget Kokkos
# and Kokkos' unit tests are the tests' (scripts/test.sh).
# Each step says what it does and how long it took (scripts/steps.sh); its output goes to a log
# under build/deps, named when the step fails.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=steps.sh
. scripts/steps.sh
for_demo=0
if [ "${1:-}" = "--demo" ]; then for_demo=1; shift; fi
mkdir -p build/deps

DEPS=build/deps
KOKKOS_SRC=$DEPS/kokkos-src
KOKKOS_VERSION=3.4.1
SRC_SUITE=bookworm          # Debian release whose trilinos (13.2.0) carries Kokkos 3.4.1
JOBS=${SETUP_JOBS:-2}

PACKAGES=(
    meson ninja-build cmake pkgconf python3
    clang-22 libomp-22-dev liboffload-22-dev g++
    llvm-22 clang-tools-22      # llvm-offload-binary, clang-linker-wrapper: needed by -fopenmp-targets
    doctest-dev libspdlog-dev libtrilinos-kokkos-dev
    valgrind xz-utils dpkg-dev ca-certificates
    libre2-dev                  # --include/--exclude: linear-time regular expressions
    libdw-dev                   # OpenMP constructs' source locations: DWARF lookups (elfutils libdw/libdwfl)
    libclang-rt-22-dev          # the ASan+UBSan build of the test suite
    openmpi-bin libopenmpi-dev  # several ranks with one --output (mpirun on loopback)
    mpich libmpich-dev          # the MPICH-family PMPI layer (libkob_mpi_mpich.so) and its tests (mpirun.mpich)
    libcli11-dev                # the kob command line (header-only)
    nlohmann-json3-dev          # the small JSON files: summary.json, kob diff --json, the report's data (header-only)
    libsqlite3-dev sqlite3      # --format=sqlite (PREFIX.sqlite); sqlite3 for `kob sql RUN` with no query
    python3-pandas              # the tests of the Python analyses of a run's database
    libprotozero-dev            # the .pftrace writer (header-only protobuf encoder) and the unit tests reading it back
    libopen-trace-format2-dev otf2-tools  # --format=otf2, and otf2-print for the tests reading the archives back
    chromium                    # the HTML report's tests load it in a real browser (headless)
)

say() { printf '%s\n' "$*"; }
die() {
    printf 'setup.sh: %s\n' "$*" >&2
    printf 'FAILED: %s\n' "${_step_name:-the set-up}" >&2
    exit 1
}

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); fi
fi

# ---------------------------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != installed ]; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] && [ ${#SUDO[@]} -eq 0 ]; then
        die "missing packages (${missing[*]}) and neither root nor sudo available"
    fi
    pkg_log=$PWD/build/deps/packages.log
    : >"$pkg_log"
    run_step "Debian's package lists (apt-get update)" "$pkg_log" "${SUDO[@]}" apt-get update
    run_step "installing ${#missing[@]} Debian packages: ${missing[*]}" "$pkg_log" \
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes \
        apt-get install -y --no-install-recommends "${missing[@]}"
fi

mkdir -p "$DEPS"

# Runs a command quietly within the current step, its output going to a log; on failure the
# step fails (steps.sh: the log's last lines, then one line naming the step and the log).
run_logged() {
    local log=$1; shift
    "$@" >>"$log" 2>&1 || step_fail "$log"
}

# ---------------------------------------------------------------------------------------------
# 2. Kokkos source from Debian's trilinos source package
# ---------------------------------------------------------------------------------------------

# Writes deb822 deb-src paragraphs for $SRC_SUITE/main, one per enabled Debian archive found in
# the system's apt sources (one-line *.list and deb822 *.sources files alike).
debian_src_entries() {
    local codename=""
    if [ -r /etc/os-release ]; then
        # shellcheck disable=SC1091
        codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    fi
    local files=()
    [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
    local f
    for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        case $f in *.disabled*) continue ;; esac
        files+=("$f")
    done
    [ ${#files[@]} -gt 0 ] || return 0
    awk -v want="$SRC_SUITE" -v codename="$codename" '
        function lc(s) { return tolower(s) }
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        # A Debian archive: suite is the release (or this system release), component main,
        # and no keyring other than Debian`s own.
        function suite_ok(list,   n, a, i) {
            n = split(list, a, /[ \t]+/)
            for (i = 1; i <= n; i++) if (a[i] == want || (codename != "" && a[i] == codename)) return 1
            return 0
        }
        function has_word(list, w,   n, a, i) {
            n = split(list, a, /[ \t]+/)
            for (i = 1; i <= n; i++) if (a[i] == w) return 1
            return 0
        }
        function key_ok(k) { return k == "" || k ~ /debian-archive/ }
        function emit(uris, key, trusted,   n, a, i) {
            n = split(uris, a, /[ \t]+/)
            for (i = 1; i <= n; i++) {
                if (a[i] == "" || (a[i] in seen)) continue
                seen[a[i]] = 1
                printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n", a[i], want
                if (key != "") printf "Signed-By: %s\n", key
                if (trusted != "") printf "Trusted: %s\n", trusted
                printf "\n"
            }
        }
        function flush_par() {
            if (deb822 && have) {
                if (lc(f["enabled"]) != "no" && (has_word(f["types"], "deb") || has_word(f["types"], "deb-src")) \
                    && suite_ok(f["suites"]) && has_word(f["components"], "main") && key_ok(f["signed-by"]))
                    emit(f["uris"], f["signed-by"], f["trusted"])
            }
            delete f; have = 0; cur = ""
        }
        FNR == 1 { flush_par(); deb822 = (FILENAME ~ /\.sources$/) }
        deb822 {
            if ($0 ~ /^[ \t]*$/) { flush_par(); next }
            if ($0 ~ /^#/) next
            if ($0 ~ /^[ \t]/) {                 # continuation line (e.g. an embedded key)
                if (cur != "") f[cur] = f[cur] "\n" $0
                next
            }
            i = index($0, ":"); if (i == 0) next
            cur = lc(trim(substr($0, 1, i - 1)))
            f[cur] = trim(substr($0, i + 1)); have = 1
            next
        }
        {   # one-line format: deb [opts] uri suite component...
            line = $0; sub(/#.*/, "", line); line = trim(line)
            if (line == "") next
            type = line; sub(/[ \t].*/, "", type)
            if (type != "deb" && type != "deb-src") next
            rest = trim(substr(line, length(type) + 1))
            key = ""; trusted = ""
            if (substr(rest, 1, 1) == "[") {
                j = index(rest, "]"); if (j == 0) next
                opts = substr(rest, 2, j - 2); rest = trim(substr(rest, j + 1))
                n = split(opts, o, /[ \t]+/)
                for (k = 1; k <= n; k++) {
                    if (lc(o[k]) ~ /^signed-by=/) key = substr(o[k], 11)
                    else if (lc(o[k]) ~ /^trusted=/) trusted = substr(o[k], 9)
                }
            }
            n = split(rest, w, /[ \t]+/)
            if (n < 3) next
            comps = ""; for (k = 3; k <= n; k++) comps = comps " " w[k]
            if (suite_ok(w[2]) && has_word(trim(comps), "main") && key_ok(key)) emit(w[1], key, trusted)
        }
        END { flush_par() }
    ' "${files[@]}"
}

fetch_kokkos_source() {
    local stamp=$KOKKOS_SRC/.setup-stamp
    if [ -f "$stamp" ] && [ -f "$KOKKOS_SRC/CMakeLists.txt" ]; then
        return 0
    fi
    local apt_dir=$PWD/$DEPS/apt dl=$DEPS/trilinos-src log=$PWD/$DEPS/kokkos-src.log
    : >"$log"
    step_start "Kokkos $KOKKOS_VERSION's source, from Debian's trilinos source package (a download of about 170 MB)"
    mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dl"

    debian_src_entries >"$apt_dir/sources.list.d/trilinos-src.sources"
    [ -s "$apt_dir/sources.list.d/trilinos-src.sources" ] ||
        die "no enabled Debian archive entry for '$SRC_SUITE' found in /etc/apt/sources.list{,.d}"
    : >"$apt_dir/sources.list"
    {
        printf 'Dir::Etc::SourceList "%s";\n' "$apt_dir/sources.list"
        printf 'Dir::Etc::SourceParts "%s";\n' "$apt_dir/sources.list.d"
        printf 'Dir::State::Lists "%s";\n' "$apt_dir/lists"
        printf 'Dir::Cache "%s";\n' "$apt_dir/cache"
        printf 'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n'
        printf 'Acquire::Languages "none";\n'
        printf 'APT::Get::Only-Source "true";\n'
        # No hooks of the system's configuration: they are meant for the system's own lists.
        printf '#clear APT::Update::Pre-Invoke;\n#clear APT::Update::Post-Invoke;\n'
        printf '#clear APT::Update::Post-Invoke-Success;\n'
        # As root apt would fetch as user _apt, who may not be able to write into this tree.
        if [ "$(id -u)" -eq 0 ]; then printf 'APT::Sandbox::User "root";\n'; fi
    } >"$apt_dir/apt.conf"
    local apt=(apt-get -q -c "$apt_dir/apt.conf")

    # An entry that is no Debian archive after all only makes `update` fail for that entry.
    "${apt[@]}" update >>"$log" 2>&1 || true
    (cd "$dl" && run_logged "$log" "${apt[@]}" source --download-only trilinos)

    local origs=("$dl"/trilinos_*.orig.tar.*)
    local orig=${origs[0]}
    [ -f "$orig" ] || die "no trilinos orig tarball in $dl (see $log)"

    local tmp=$DEPS/kokkos-src.tmp
    rm -rf "$tmp" "$KOKKOS_SRC"
    mkdir -p "$tmp"
    run_logged "$log" tar -xf "$orig" -C "$tmp" --wildcards '*/packages/kokkos/*'
    local tops=("$tmp"/*/packages/kokkos)
    local top=${tops[0]}
    [ -f "$top/CMakeLists.txt" ] || die "packages/kokkos not found in $orig"
    mv "$top" "$KOKKOS_SRC"
    rm -rf "$tmp"

    local v
    v=$(sed -n 's/^set(Kokkos_VERSION_\(MAJOR\|MINOR\|PATCH\) 0*\([0-9][0-9]*\)).*/\2/p' \
        "$KOKKOS_SRC/CMakeLists.txt" | paste -sd.)   # 3.4.01 -> 3.4.1
    [ "$v" = "$KOKKOS_VERSION" ] || die "expected Kokkos $KOKKOS_VERSION in $orig, found '$v'"

    printf '%s\n' "$(basename "$orig")" >"$stamp"
    # The stamp makes the download unnecessary from now on.
    rm -rf "$dl" "$apt_dir/lists" "$apt_dir/cache"
    step_end
}

# ---------------------------------------------------------------------------------------------
# 3. Kokkos builds
# ---------------------------------------------------------------------------------------------
CLANG_VERSION=""

# build_kokkos NAME CMAKE_ARGS...: configures, builds and installs into $DEPS/NAME.
build_kokkos() {
    local name=$1; shift
    local prefix=$DEPS/$name bdir=$DEPS/$name-build log=$PWD/$DEPS/$name.log
    local config
    config="kokkos=$(cat "$KOKKOS_SRC/.setup-stamp") cxx=$CLANG_VERSION args=$*"
    if [ -f "$prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] && [ -f "$prefix/.setup-stamp" ] &&
        [ "$(cat "$prefix/.setup-stamp")" = "$config" ]; then
        say "$name: $prefix (cached)"
        return 0
    fi
    rm -rf "$prefix" "$bdir"
    : >"$log"
    run_step "$name: configuring Kokkos (cmake)" "$log" env CC=clang-22 CXX=clang++-22 cmake -S "$KOKKOS_SRC" -B "$bdir" -G Ninja \
        -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
        "$@"
    build_step "$name: building Kokkos with clang++-22 ($JOBS jobs)" "$log" cmake --build "$bdir" -j "$JOBS"
    run_step "$name: installing it into $prefix" "$log" cmake --install "$bdir"
    printf '%s\n' "$config" >"$prefix/.setup-stamp"
}

fetch_kokkos_source
CLANG_VERSION=$(clang++-22 --version | head -n 1)

build_kokkos kokkos-openmp \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON
if [ "$for_demo" = 1 ]; then exit 0; fi
build_kokkos kokkos-openmptarget \
    -DKokkos_ENABLE_OPENMPTARGET=ON -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_CXX_FLAGS=-fopenmp-targets=x86_64-pc-linux-gnu

# ---------------------------------------------------------------------------------------------
# 4. A subset of Kokkos' own core unit tests, against kokkos-openmp: built once here and shared
#    by every build folder (tests/integration/test_kokkos_unit_tests.py runs them with and without
#    the tool). Each Category:Name is Kokkos' test file core/unit_test/TestName.hpp for that
#    execution space, as Kokkos' CMakeLists.txt makes them.
# ---------------------------------------------------------------------------------------------
KOKKOS_UNIT_TESTS="OpenMP:Reductions OpenMP:Scan OpenMP:TeamBasic OpenMP:TeamScan OpenMP:MDRange_a OpenMP:Atomics
OpenMP:LocalDeepCopy OpenMP:ViewCopy_a OpenMP:RangePolicy Serial:Reductions Serial:Scan Serial:TeamBasic"

build_kokkos_unit_tests() {
    local out=$DEPS/kokkos-unit-tests prefix=$DEPS/kokkos-openmp src=$KOKKOS_SRC/core/unit_test
    local log=$PWD/$DEPS/kokkos-unit-tests.log
    local config
    config="kokkos=$(cat "$prefix/.setup-stamp") tests=$(echo $KOKKOS_UNIT_TESTS)"
    if [ -x "$out/kokkos_unit_tests" ] && [ "$(cat "$out/.setup-stamp" 2>/dev/null)" = "$config" ]; then
        say "kokkos-unit-tests: $out (cached)"
        return 0
    fi
    rm -rf "$out"
    mkdir -p "$out/obj"
    : >"$log"
    step_start "kokkos-unit-tests: building $(echo $KOKKOS_UNIT_TESTS | wc -w) categories of Kokkos' own unit tests ($JOBS jobs)"
    local t cat name sources=()
    for t in $KOKKOS_UNIT_TESTS; do
        cat=${t%%:*} name=${t#*:}
        printf '#include <Test%s_Category.hpp>\n#include <Test%s.hpp>\n' "$cat" "$name" >"$out/obj/Test${cat}_$name.cpp"
        sources+=("$out/obj/Test${cat}_$name.cpp")
    done
    sources+=("$src/UnitTestMainInit.cpp" "$KOKKOS_SRC/tpls/gtest/gtest/gtest-all.cc")
    # -O1: the tests' own code needs no more; Kokkos itself is the Release build.
    printf '%s\n' "${sources[@]}" | xargs -P "$JOBS" -I{} sh -c \
        'clang++-22 -std=c++17 -O1 -fopenmp -w -isystem "$1/include" -I "$2" -I "$2/category_files" -I "$3/tpls/gtest" \
            -c "$4" -o "$5/obj/$(basename "$4").o" >>"$6" 2>&1 && echo "    compiled $(basename "$4")"' _ "$prefix" "$src" "$KOKKOS_SRC" {} "$out" "$log" ||
        step_fail "$log"
    run_logged "$log" clang++-22 -fopenmp "$out"/obj/*.o "$prefix/lib/libkokkoscontainers.a" "$prefix/lib/libkokkoscore.a" \
        -ldl -lpthread -o "$out/kokkos_unit_tests"
    printf '%s\n' "$config" >"$out/.setup-stamp"
    step_end
}
build_kokkos_unit_tests
