"""Kokkos' own core unit tests (a subset, built by scripts/setup.sh into build/deps/kokkos-unit-tests)
run four ways on 2 OpenMP threads: without a tool, with the library through the environment
(KOKKOS_PROFILE_LIBRARY + OMP_TOOL_LIBRARIES), under `kob run`, and with count_tool (an independent
Kokkos tool that only counts). Checked:
- the same tests pass and fail in every mode (gtest's XML report), the program's stdout is the
  same (gtest's times taken out) and its stderr has nothing but the tool's own lines;
- the summary of both tool runs equals count_tool's counts: kernels per name, kind and execution
  space (a name run on two spaces is two rows), region pushes per name, fences, allocations
  (calls and bytes) and frees per space, deep copies (calls and bytes);
- the Chrome trace and the Perfetto trace hold the same spans (per category and name)."""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402
import pftrace_decode as pd  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--tests", required=True, help="the Kokkos unit-test program")
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--count-tool", required=True)
a = ap.parse_args()
tests, lib, kob, counter = (os.path.abspath(p) for p in (a.tests, a.lib, a.kob, a.count_tool))
if not os.path.exists(tests):
    kc.check(False, f"{tests} is missing: scripts/setup.sh builds it")
    kc.finish()
wd = kc.workdir()
TOOL_VARS = ["KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "LD_PRELOAD"]
BASE = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"}
# What the program prints that differs run to run: gtest's times.
TIMES = re.compile(r" \(\d+ ms( total)?\)")


def outcomes(path):
    """(suite, test, outcome) of every test in gtest's XML report (Kokkos 3.4.1's gtest has no JSON)."""
    root = ET.parse(path).getroot()
    return sorted((suite.get("name"), case.get("name"), "failed" if case.find("failure") is not None else case.get("status"))
                  for suite in root.iter("testsuite") for case in suite.iter("testcase"))


def run(mode, cmd, env):
    report = os.path.join(wd, mode + ".gtest.xml")
    rc, out, err = kc.run(cmd + [f"--gtest_output=xml:{report}", "--gtest_print_time=0"], {**BASE, **env}, cwd=wd,
                          unset=TOOL_VARS)
    return rc, TIMES.sub("", out), err, outcomes(report) if os.path.exists(report) else None


def tool_lines(err):
    return [l for l in kc.without_sanitizer_notes(err.splitlines())
            if l.strip() and not l.startswith(("kokkos-ompt-bridge: ", "kob: "))]


rc0, out0, err0, res0 = run("plain", [tests], {})
kc.check(res0 is not None and len(res0) >= 40, f"the unit tests ran ({len(res0 or [])} tests, rc {rc0}, {err0[-300:]!r})")
passed = sum(1 for r in res0 or [] if r[2] == "run")
print(f"{len(res0 or [])} Kokkos unit tests, {passed} completed, rc {rc0}")

env_prefix = os.path.join(wd, "env")
modes = {
    "env": (lambda: run("env", [tests], {"KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
                                         "KOB_ARGS": f"--output={env_prefix} --quiet --format=json,perfetto,chrome"})),
    "kob run": (lambda: run("kobrun", [kob, "run", f"--output={os.path.join(wd, 'kobrun')}", "--quiet", "--format=json", "--",
                                       tests], {})),
    "count": (lambda: run("count", [tests], {"KOKKOS_PROFILE_LIBRARY": counter, "COUNT_TOOL_OUT": os.path.join(wd, "count.json")})),
}
for mode, go in modes.items():
    rc, out, err, res = go()
    kc.expect_eq((rc, res), (rc0, res0), f"{mode}: the same exit status and the same outcome of every test")
    kc.expect_eq(out, out0, f"{mode}: the same stdout")
    kc.expect_eq(tool_lines(err), tool_lines(err0), f"{mode}: nothing on stderr but the tool's lines")

count = kc.load_json(os.path.join(wd, "count.json"))
want_kernels = kc.count_tool_counts(count)["kernels"]
print(f"count_tool: {sum(c for *_, c in want_kernels)} kernels in {len(want_kernels)} rows, {sum(count['regions'].values())} "
      f"regions, {count['fences']} fences, {sum(v[0] for v in count['allocations'].values())} allocations, "
      f"{count['deep_copies'][0]} deep copies")
for mode, prefix in (("env", env_prefix), ("kob run", os.path.join(wd, "kobrun"))):
    kc.expect_kokkos_counts(kc.load_json(prefix + ".summary.json"), count, mode)

# The Chrome and the Perfetto trace of the environment run: the same spans.
with open(env_prefix + ".trace.json") as f:
    chrome = kc.json_load(f)
ch = Counter((e["cat"], e["name"]) for e in chrome["traceEvents"] if e.get("ph") == "X")
pf = kc.check_pftrace_rules(env_prefix + ".pftrace")
slices, problems = pd.slices(pf)
kc.expect_eq(problems, [], "Perfetto: BEGIN/END balanced on every track")
pfc = Counter((s["cat"], s["name"]) for s in slices if s["cat"] != "section")
kc.expect_eq(sum(pfc.values()), sum(ch.values()), "as many Perfetto slices as Chrome spans")
kc.expect_eq(pfc, ch, "the same spans per category and name")
kc.expect_eq(ch[("kokkos.kernel", want_kernels[0][0])] > 0 if want_kernels else True, True, "kernels in the trace")
kc.finish()
