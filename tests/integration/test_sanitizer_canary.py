"""Sanitizer build only: a finding must stop the program with the sanitizer's exit code and be
flagged by the harness (kob_check.run), for an address error, undefined behaviour and a leak (build-asan)
or a data race (build-tsan: the race is between two std::threads of our own code); a clean run must pass untouched. Guards the options meson sets and the harness's report check."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--sanitize", required=True, choices=["address,undefined", "thread"])
a = ap.parse_args()
prog = os.path.abspath(a.program)

kc.check(kc.SANITIZER_PRELOAD != "" and os.path.exists(kc.SANITIZER_PRELOAD),
         f"KOB_SANITIZER_PRELOAD names the runtime: {kc.SANITIZER_PRELOAD!r}")
env = kc.program_env()
kc.check(env["LD_PRELOAD"].split(":")[0] == kc.SANITIZER_PRELOAD, f"the runtime comes first in LD_PRELOAD: {env['LD_PRELOAD']!r}")
env = kc.program_env({"LD_PRELOAD": "/some/tool.so"})
kc.expect_eq(env["LD_PRELOAD"], kc.SANITIZER_PRELOAD + ":/some/tool.so", "a test's own LD_PRELOAD comes after the runtime")
env = kc.program_env(unset=("LD_PRELOAD",))
kc.expect_eq(env["LD_PRELOAD"], kc.SANITIZER_PRELOAD, "dropping LD_PRELOAD keeps the runtime")

rc, out, err = kc.run([prog, "clean"])
kc.expect_eq((rc, out), (0, "clean\n"), "a clean run")
bugs = {"address,undefined": (("heap-overflow", "ERROR: AddressSanitizer: heap-buffer-overflow"),
                               ("signed-overflow", "runtime error: signed integer overflow"),
                               ("leak", "ERROR: LeakSanitizer: detected memory leaks")),
        "thread": (("data-race", "WARNING: ThreadSanitizer: data race"),)}
for bug, marker in bugs[a.sanitize]:
    before = len(kc.failures)
    rc, out, err = kc.run([prog, bug])
    flagged = len(kc.failures) > before
    del kc.failures[before:]  # the harness did its job; these failures are the expected ones
    kc.check(flagged, f"[{bug}] the harness flags the report")
    kc.check(marker in err, f"[{bug}] the sanitizer reports it: {err[-500:]!r}")
    kc.check(rc != 0, f"[{bug}] the program stops with an error exit, got {rc}")
kc.finish()
