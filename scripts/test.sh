#!/usr/bin/env bash
# Sets up, builds and runs every test (unit and integration). The last line counts them.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
scripts/setup.sh || exit 1
scripts/build.sh -Dtests=true || exit 1
meson test -C build --print-errorlogs --num-processes 2
rc=$?
python3 - <<'PY'
import json
passed = failed = skipped = 0
with open("build/meson-logs/testlog.json") as f:
    for line in f:
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
