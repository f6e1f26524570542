"""The findings on plain OpenMP (samples/openmp_constructs.cpp, no Kokkos): its imbalanced static
loop, its 10000 tiny parallel regions and its contended critical section give load_imbalance,
fork_join_overhead and lock_contention, each naming the directive's `file:line` the program prints
(KOB_LINE); summary.json openmp.constructs has an entry for each with the calls the program makes,
and summary.txt's table names the lines. Timing thresholds are the rules' own: a run on a machine
kept busy by other work, where a finding is missing, is run again (kob_check.until_settled)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()

T = 2
lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "out")
env = {"OMP_NUM_THREADS": str(T), "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet --format=summary,json"}
# label printed by the program -> the finding about it, and the construct kinds (summary entries)
# at its line with their exact calls (None: present, count not checked).
EXPECTED = {
    "imbalanced_loop": ("load_imbalance", {"parallel": 3, "loop_static": None}),
    "tiny_regions": ("fork_join_overhead", {"parallel": 10000}),
    "contended_critical": ("lock_contention", {"critical": T * 2000}),
}


def finding_text(f):
    return " ".join(str(f.get(k, "")) for k in ("title", "subject", "evidence", "fix"))


def known_lines(out):
    lines = {}
    for line in out.splitlines():
        if line.startswith("KOB_LINE "):
            _, label, file, number = line.split()
            lines[label] = f"{file}:{number}"
    return lines


def attempt():
    return kc.run([os.path.abspath(a.program)], env, cwd=wd, unset=("LD_PRELOAD",))


def missing_finding(res):
    rc, out, _ = res
    if rc != 0:
        return None
    try:
        with open(prefix + ".summary.json") as f:
            findings = kc.json_load(f).get("findings") or []
    except (OSError, ValueError):
        return None  # the checks below say what is wrong
    where = known_lines(out)
    missing = [fid for label, (fid, _) in EXPECTED.items()
               if not any(f.get("id") == fid and where.get(label, "?") in finding_text(f) for f in findings)]
    return f"missing {missing}; found {[f.get('id') for f in findings]}" if missing else None


rc, out, err = kc.until_settled(attempt, missing_finding)
kc.expect_eq(rc, 0, f"exit code ({err.strip()[-300:]})")
kc.check(out.splitlines()[-1:] and out.splitlines()[-1].startswith("openmp_constructs done"), f"stdout: {out[-200:]}")
where = known_lines(out)
kc.expect_eq(sorted(where), sorted(EXPECTED), "KOB_LINE labels")

with open(prefix + ".summary.json") as f:
    s = kc.json_load(f)
with open(prefix + ".summary.txt") as f:
    text = f.read()
findings = s.get("findings") or []
kc.expect_eq(s.get("dropped_events"), 0, "dropped events")
for label, (fid, kinds) in EXPECTED.items():
    at = where.get(label, "?")
    same_id = [f for f in findings if f.get("id") == fid]
    naming = [f for f in same_id if at in finding_text(f)]
    kc.check(naming, f"{label}: a {fid} finding naming {at} (those with that id: {[finding_text(f) for f in same_id]})")
    kc.check(at in text, f"{label}: summary.txt names {at}")

constructs = (s.get("openmp") or {}).get("constructs")
ENTRY_KEYS = {"kind", "function", "file", "line", "module", "calls", "total_ns", "mean_ns"}
if kc.check(isinstance(constructs, list), "summary.json openmp.constructs is a list"):
    for label, (_, kinds) in EXPECTED.items():
        file, _, line = where.get(label, "?:0").partition(":")
        for kind, calls in kinds.items():
            entries = [c for c in constructs if c.get("kind") == kind and c.get("line") == int(line)
                       and os.path.basename(str(c.get("file"))) == file]
            if not kc.expect_eq(len(entries), 1, f"{label}: openmp.constructs entries for {kind} at {file}:{line}"):
                continue
            c = entries[0]
            kc.check(ENTRY_KEYS <= set(c), f"{label} {kind}: entry keys {sorted(c)}")
            kc.expect_eq(c.get("function"), f"(anonymous namespace)::{label}(int)", f"{label} {kind}: function")
            kc.check(os.path.basename(str(c.get("module"))) == "openmp_constructs", f"{label} {kind}: module {c.get('module')}")
            if calls is not None:
                kc.expect_eq(c.get("calls"), calls, f"{label} {kind}: calls")
            if kind == "critical":
                kc.check(c.get("wait_ns", 0) > 0 and c.get("hold_ns", 0) > 0, f"{label}: wait and hold time: {c}")
            else:
                kc.check({"team_size", "load_imbalance", "barrier_wait"} <= set(c), f"{label} {kind}: keys {sorted(c)}")
                kc.expect_eq(c.get("team_size"), T, f"{label} {kind}: team size")
kc.finish()
