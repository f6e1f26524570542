"""One case of samples/openmp_rules (plain OpenMP) under the library: the rule the case is about fires
at the line the program prints (KOB_LINE), no other rule fires but those listed for the case, and
no finding about a region without a loop advises a loop schedule; the balanced case has no finding
at all. The figures compared are the run's own (the rules' thresholds); a run on a machine kept busy
by other work whose findings differ is run again (kob_check.until_settled)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--case", required=True)
a = ap.parse_args()

lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "out")
env = {"OMP_NUM_THREADS": "2", "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet --format=summary,json"}
# case -> (the finding at the case's line, other findings the case may also get). tiny_tasks: one
# thread creates every task while the other waits, which is also load_imbalance (its fix must be
# about creating the tasks).
EXPECTED = {
    "small_reduction": ("fork_join_overhead", set()),
    "tiny_tasks": ("task_granularity", {"load_imbalance"}),
    "nested": ("serialized_region", set()),
    "one_thread": ("serialized_region", set()),
    "balanced": (None, set()),
}
want, allowed = EXPECTED[a.case]


def text_of(f):
    return " ".join(str(f.get(k, "")) for k in ("title", "subject", "location", "evidence", "fix"))


def line_of(out):
    for line in out.splitlines():
        if line.startswith("KOB_LINE "):
            _, _, file, number = line.split()
            return f"{file}:{number}"
    return None


def findings():
    try:
        with open(prefix + ".summary.json") as f:
            return kc.json_load(f).get("findings") or []
    except (OSError, ValueError):
        return None


def unsettled(res):
    rc, out, _ = res
    got = findings()
    if rc != 0 or got is None:
        return None  # the checks below say what is wrong
    ids = [f.get("id") for f in got]
    if want is None:
        return f"found {ids}, expected none" if ids else None
    at = line_of(out) or "?"
    if not any(f.get("id") == want and at in text_of(f) for f in got):
        return f"no {want} at {at}: found {ids}"
    extra = set(ids) - {want} - allowed
    return f"unexpected {sorted(extra)}" if extra else None


rc, out, err = kc.until_settled(lambda: kc.run([os.path.abspath(a.program), a.case], env, cwd=wd, unset=("LD_PRELOAD",)),
                                unsettled)
kc.expect_eq(rc, 0, f"exit code ({err.strip()[-300:]})")
kc.check(out.splitlines()[-1:] and out.splitlines()[-1].startswith(f"{a.case} done"), f"stdout: {out[-200:]}")
at = line_of(out)
kc.check(at is not None and at.startswith("openmp_rules.cpp:"), f"KOB_LINE printed: {out[:200]}")
got = findings()
if kc.check(got is not None, "summary.json with findings"):
    ids = [f.get("id") for f in got]
    if want is None:
        kc.expect_eq(ids, [], "findings of the balanced case")
        with open(prefix + ".summary.txt") as f:
            kc.check("findings: none" in f.read(), "summary.txt says findings: none")
    else:
        mine = [f for f in got if f.get("id") == want and at in text_of(f)]
        kc.expect_eq(len(mine), 1, f"{want} findings naming {at} (found {ids})")
        kc.expect_eq(sorted(set(ids) - {want} - allowed), [], "other findings")
        for f in mine:
            kc.check(f.get("location", "").endswith(at), f"{want}: location {f.get('location')}")
            kc.check(f.get("time_at_stake_ns", 0) > 0 and f.get("threshold"), f"{want}: stake and threshold: {f}")
    # No loop in these regions: no loop-schedule advice anywhere.
    for f in got:
        kc.check("schedule(" not in f.get("fix", ""), f"{f.get('id')}: advice fits the region: {f.get('fix')}")
    if a.case == "tiny_tasks":
        for f in got:
            if f.get("id") == "load_imbalance":
                kc.check("create them from every thread" in f.get("fix", ""), f"producer advice: {f.get('fix')}")
    if a.case == "small_reduction":
        f = next((x for x in got if x.get("id") == want), {})
        kc.check("inside its worksharing constructs and tasks" in f.get("evidence", ""), f"both figures: {f.get('evidence')}")
    if a.case in ("nested", "one_thread"):
        f = next((x for x in got if x.get("id") == want), {})
        cause = "nested in another parallel region" if a.case == "nested" else "asking for one thread"
        kc.check(cause in f.get("evidence", ""), f"{a.case}: the cause in the evidence: {f.get('evidence')}")
kc.finish()
