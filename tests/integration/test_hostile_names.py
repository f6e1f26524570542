"""Kernel names that used to crash or stall the filter (a 50 KB and a 1 MB name of one repeated
letter against --include=a*b and --include=(a+)+$) and to flood the text summary (the 1 MB name)
or the terminal (control characters): the program keeps its exit code, the files are written and
valid, the filters give exact counts, the text output stays small and free of control bytes, and
the full names stay in the JSON files."""
import argparse
import json
import os
import subprocess

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)

# The kernels of hostile_names.cpp and their calls.
LONG50K = "L" + "a" * (50 * 1024 - 2) + "Z"
LONG1M = "HEAD_" + "a" * (1 << 20) + "_b_TAIL"
KERNELS = {LONG50K: 2, LONG1M: 3, "esc\x1b[31mred\x1b[0m": 1, "cr\rname": 1, "tab\tb": 1, "soh\x01name": 1,
           "plain_b": 4, "ends_in_aaa": 5}
REGION = "region_" + "a" * (60 * 1024) + "_end"
PROGRAM_RC = 7  # hostile_names returns 7


def run(args):
    """Runs the program (bytes in and out: control characters must be seen as they are)."""
    wd = kc.workdir()
    prefix = os.path.join(wd, "h")
    env = kc.program_env(unset=("KOB_ARGS",))
    p = subprocess.run([prog, lib, f"--output={prefix}", kc.CHROME] + args, env=env, cwd=wd, capture_output=True, timeout=120)
    kc.check_no_sanitizer_report(p.stderr, prog)
    return p.returncode, p.stdout, p.stderr, prefix


def kernel_calls(prefix):
    with open(prefix + ".summary.json", encoding="utf-8") as f:
        summary = kc.json_load(f)
    with open(prefix + ".trace.json", encoding="utf-8") as f:
        trace = kc.json_load(f)
    kc.validate_trace(trace)
    calls = {k["name"]: k["calls"] for k in summary["kernels"]}
    traced = {}
    for e in kc.events(trace, "kokkos.kernel"):
        traced[e["name"]] = traced.get(e["name"], 0) + 1
    kc.expect_eq(traced, calls, "the trace holds the kernels the summary counts, full names")
    return summary, trace, calls


# Filters in RE2 syntax, partial match; the program must not crash (exit 139 before) nor stall.
for pattern, keep in (("--include=a*b", lambda n: "b" in n),
                      ("--include=(a+)+$", lambda n: n.endswith("a")),
                      ("--exclude=(a+)+$", lambda n: not n.endswith("a"))):
    rc, out, err, prefix = run(["--quiet", pattern])
    kc.expect_eq(rc, PROGRAM_RC, f"{pattern}: exit code unchanged")
    kc.expect_eq(out, b"done\n", f"{pattern}: stdout unchanged")
    if not kc.check(all(os.path.exists(prefix + x) for x in (".trace.json", ".summary.json", ".summary.txt")),
                    f"{pattern}: all files written"):
        continue
    summary, trace, calls = kernel_calls(prefix)
    expected = {n: c for n, c in KERNELS.items() if keep(n)}
    kc.expect_eq({n[:40]: c for n, c in calls.items()}, {n[:40]: c for n, c in expected.items()},
                 f"{pattern}: kernels and exact calls kept")
    kc.expect_eq(summary["filtered_kernel_calls"], sum(KERNELS.values()) - sum(expected.values()),
                 f"{pattern}: kernel calls left out")
    kc.expect_eq(summary["filtered_region_entries"], 0 if keep(REGION) else 1, f"{pattern}: region entries left out")

# An invalid pattern and one RE2 rejects as too large: one line each with RE2's reason, the option ignored.
rc, out, err, prefix = run(["--quiet", "--include=(", "--exclude=\\pL{1000}"])
kc.expect_eq(rc, PROGRAM_RC, "bad patterns: exit code unchanged")
lines = err.decode().splitlines()
kc.check(any("'--include=('" in l and "not a valid RE2 regular expression (missing ): ()" in l for l in lines),
         f"invalid pattern named with RE2's error: {lines}")
kc.check(any("'--exclude=\\pL{1000}'" in l and "pattern too large" in l for l in lines),
         f"a pattern over RE2's memory budget named with RE2's error: {lines}")
summary, _, calls = kernel_calls(prefix)
kc.expect_eq(sum(calls.values()), sum(KERNELS.values()), "bad patterns ignored: nothing filtered")

# Text output, with the summary on stderr too: small, cut names with both ends, no control byte.
rc, out, err, prefix = run([])
kc.expect_eq(rc, PROGRAM_RC, "no filter: exit code unchanged")
with open(prefix + ".summary.txt", "rb") as f:
    text = f.read()
MAX_LINE = 160
for what, data in (("summary.txt", text), ("stderr", err)):
    kc.check(len(data) < 8192, f"{what} stays small: {len(data)} bytes")
    bad = sorted({b for b in data if b < 0x20 and b != 0x0A} | ({0x7F} & set(data)))
    kc.expect_eq(bad, [], f"no raw control byte in {what}")
    # The last line names the files written and what to do next: paths, as long as the user's.
    longest = max(len(l) for l in data.split(b"\n") if not l.startswith(b"kokkos-ompt-bridge: wrote "))
    kc.check(longest <= MAX_LINE, f"{what}: longest line {longest} columns, at most {MAX_LINE}")
kc.check(text in err, "stderr shows the summary file's text")
body = text.decode()
kc.check("HEAD_aaaa" in body and "..." in body and "aaa_b_TAIL" in body, "the 1 MB name: head, marker and tail shown")
kc.check("Laaaa" in body and "aaaZ" in body, "the 50 KB name: head and tail shown")
kc.check("region_aaaa" in body and "aaa_end" in body, "the 60 KB region name: head and tail shown")
for shown in ("esc\\x1b[31mred\\x1b[0m", "cr\\rname", "tab\\tb", "soh\\x01name"):
    kc.check(shown in body, f"control characters escaped: {shown}")
summary, trace, calls = kernel_calls(prefix)
kc.expect_eq(calls, KERNELS, "JSON summary: every kernel under its full name, exact calls")
kc.expect_eq({e["name"] for e in kc.events(trace, "kokkos.region")}, {REGION}, "trace: the region under its full name")
kc.finish()
