#!/usr/bin/env bash
# Sets up, builds and runs every test (unit and integration) twice, in build/ and in build-asan/
# where the library, the unit tests and our test programs are built with
# -fsanitize=address,undefined (host programs run with the sanitizer runtime preloaded; any
# finding fails its test), and then the tests of suite tsan in build-tsan/ (-fsanitize=thread:
# the unit tests and the std::thread programs that drive recorder, writer, signals and fork;
# libomp and Kokkos are not instrumented, so no OpenMP program runs there). The last line counts
# the tests of all three runs. Timeouts are hang guards, tripled so that they hold on a machine busy
# with other work (docs/testing.md); no test checks a time.
# Each step says what it does (scripts/steps.sh); the time of each is printed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=steps.sh
. scripts/steps.sh
steps_begin
scripts/setup.sh || exit 1
scripts/build.sh -Dtests=true || exit 1
step_start "the tests in build/ (meson test)"
meson test -C build --print-errorlogs --num-processes 2 --timeout-multiplier 3
rc=$?
step_end
echo "== the same tests under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan) =="
scripts/build.sh --sanitize -Dtests=true || exit 1
step_start "the tests in build-asan/ (meson test)"
meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3
rc_san=$?
step_end
echo "== the tests of our own threads under ThreadSanitizer (build-tsan, suite tsan) =="
scripts/build.sh --tsan -Dtests=true || exit 1
step_start "the tests of suite tsan in build-tsan/ (meson test, building what they use)"
meson test -C build-tsan --suite tsan --print-errorlogs --num-processes 2 --timeout-multiplier 3
rc_tsan=$?
step_end
steps_report
python3 - <<'PY'
import json
passed = failed = skipped = 0
failures = []
for log in ("build/meson-logs/testlog.json", "build-asan/meson-logs/testlog.json", "build-tsan/meson-logs/testlog.json"):
    with open(log) as f:
        for line in f:
            t = json.loads(line)
            r = t.get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
                failures.append((log.split("/")[0], t))
# The failures' own words again at the very end, where a log cut to its tail still shows them.
for where, t in failures:
    print(f"== failed in {where}: {t.get('name')} ({t.get('result')}) ==")
    out = ((t.get("stdout") or "") + (t.get("stderr") or "")).splitlines()
    print("\n".join(l[:300] for l in out[-40:]))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
[ $rc -eq 0 ] && [ $rc_san -eq 0 ] && [ $rc_tsan -eq 0 ]
