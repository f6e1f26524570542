"""The tests read what exists: kob_check loads every output as Strict objects, so a key a test reads
that the output lacks fails the test instead of reading a default. Checked two ways:
- Strict itself: d["k"] and d.get("k", 0) raise on a missing key; d.get(k, default) gives the
  default only for the keys the schema makes optional (kob_check.OPTIONAL_KEYS);
- a real test with a key planted misspelt (KOB_CHECK_MISSPELL renames it in every object loaded):
  test_kokkos_sample.py must fail, naming the key, for `dropped_events` (the key a check of
  "nothing dropped" once misread as `dropped`, taking 0) and for `calls`; without a plant it passes."""
import argparse
import os
import subprocess
import sys

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--sample-test", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()

d = kc.json_loads('{"dropped_events": 0, "args": {"id": 3}}')
for what, read in (("d['dropped']", lambda: d["dropped"]), ("d.get('dropped', 0)", lambda: d.get("dropped", 0)),
                   ("d.get('dropped')", lambda: d.get("dropped"))):
    try:
        read()
        kc.check(False, f"{what} on an object without it raises")
    except kc.MissingKey as e:
        kc.check("'dropped'" in str(e) and "dropped_events" in str(e), f"{what}: the error names the key and what is there ({e})")
kc.expect_eq((d["dropped_events"], d.get("dropped_events", 7), d["args"].get("cut", False)), (0, 0, False),
             "keys present read as they are; an optional key absent reads its default")


def sample_test(plant):
    # The planted run fails and keeps its files: in a folder of ours, removed when this test passes.
    env = {k: v for k, v in os.environ.items() if k != "KOB_CHECK_MISSPELL"}
    env["TMPDIR"] = kc.workdir()
    if plant:
        env["KOB_CHECK_MISSPELL"] = plant
    p = subprocess.run([sys.executable, a.sample_test, "--program", a.program, "--lib", a.lib, "--route", "env",
                        "--backend", "openmp", "--threads", "2"], env=env, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


rc, out = sample_test(None)
kc.expect_eq(rc, 0, f"the sample test passes as it is ({out[-400:]!r})")
for key in ("dropped_events", "calls"):
    rc, out = sample_test(key)
    kc.check(rc != 0, f"with {key!r} planted misspelt the sample test fails (rc {rc})")
    kc.check(f"the key {key!r} is not in this object" in out, f"and says which key is missing ({out[-300:]!r})")
kc.finish()
