"""A kernel name run on two execution spaces is a row per space everywhere (two_spaces:
"shared_name" 3 calls on OpenMP, 2 on Serial): summary.json (kernels, and openmp.kernels for the
OpenMP row only), the text summary, kob diff (text and JSON; each row its own calls), kob sql's
kernels report, kob merge's kernels across ranks (and its Kokkos runtime constructs, a group of
their own), and the HTML report's kernel table."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium_page as cp  # noqa: E402
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
a = ap.parse_args()
lib, kob, prog = os.path.abspath(a.lib), os.path.abspath(a.kob), os.path.abspath(a.program)
wd = kc.workdir()
WANT = [("shared_name", "parallel_for", "OpenMP", 3), ("shared_name", "parallel_for", "Serial", 2)]


def record(name):
    prefix = os.path.join(wd, name)
    env = {"OMP_NUM_THREADS": "2", "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
           "KOB_ARGS": f"--output={prefix} --quiet --format=json,summary,sqlite,html"}
    rc, out, err = kc.run([prog], env, cwd=wd, unset=("LD_PRELOAD", "KOKKOS_TOOLS_LIBS"))
    kc.expect_eq((rc, out), (0, "two_spaces sum 3001000\n"), f"{name}: runs as without the tool ({err[-300:]})")
    with open(prefix + ".summary.json") as f:
        return prefix, kc.json_load(f)


A, sa = record("a")
B, _ = record("b")
rows = sorted((k["name"], k["kind"], k["device"], k["calls"]) for k in sa["kernels"] if k["name"] == "shared_name")
kc.expect_eq(rows, WANT, "summary.json: a row per space, each with its own calls")
omp = [(k["name"], k["device"], k["calls"]) for k in sa["openmp"]["kernels"] if k["name"] == "shared_name"]
kc.expect_eq(omp, [("shared_name", "OpenMP", 3)], "openmp.kernels: the OpenMP row only, its calls")
by_space = {}
for k in sa["kernels"]:
    by_space[k["device"]] = by_space.get(k["device"], 0) + k["calls"]
kc.check(by_space.get("Serial", 0) >= 2 and by_space.get("OpenMP", 0) >= 4, f"calls per space add up: {by_space}")

with open(A + ".summary.txt") as f:
    text = [l.split() for l in f if "shared_name" in l and len(l.split()) > 2 and l.split()[2] in ("OpenMP", "Serial")]
kc.expect_eq(sorted((t[0], t[1], t[2], t[3]) for t in text), [(n, k, d, str(c)) for n, k, d, c in WANT],
             "the text summary: a row per space")

rc, out, err = kc.run([kob, "diff", A, B, "--json"], cwd=wd)
d = kc.json_loads(out) if rc == 0 else {"kernels": []}
got = sorted((k["name"], k["kind"], k["device"], k["calls_a"], k["calls_b"]) for k in d["kernels"] if k["name"] == "shared_name")
kc.expect_eq(got, [(n, k, dv, c, c) for n, k, dv, c in WANT], f"kob diff --json: a row per space ({err[-300:]})")
rc, out, err = kc.run([kob, "diff", A, B], cwd=wd)
kc.expect_eq(sorted(l.split()[0] + " " + l.split()[1] for l in out.splitlines() if "shared_name" in l),
             ["shared_name [OpenMP]", "shared_name [Serial]"], "kob diff text: the space after a name run on two")

rc, out, err = kc.run([kob, "sql", A, "--report", "kernels", "--json"], cwd=wd)
sql = kc.json_loads(out) if rc == 0 else []
kc.expect_eq(sorted((r["name"], r["kind"], r["space"], r["calls"]) for r in sql if r["name"] == "shared_name"), WANT,
             f"kob sql --report kernels: a row per space ({err[-300:]})")

M = os.path.join(wd, "m")
rc, out, err = kc.run([kob, "merge", A, B, "-o", M, "--to=json,summary", "-q"], cwd=wd)
with open(M + ".summary.json") as f:
    merged = kc.json_load(f)
kc.expect_eq(sorted((k["name"], k["kind"], k["device"], k["calls_max"]) for k in merged["kernels"] if k["name"] == "shared_name"),
             WANT, "kob merge: a row per space")
# ... and Kokkos' own constructs (its OpenMP start-up) as their own group, after the program's.
groups = [(c["group"], c["name"].startswith("Kokkos::")) for c in merged["constructs"]]
kc.check(groups and all(g == ("kokkos_runtime" if k else "program") for g, k in groups) and
         [g for g, _ in groups] == sorted((g for g, _ in groups), key=lambda g: g == "kokkos_runtime"),
         f"kob merge: the Kokkos runtime group, last: {groups}")
with open(M + ".summary.txt") as f:
    kc.check("Kokkos runtime constructs across ranks" in f.read(), "kob merge's text: the Kokkos runtime section")

html = cp.dump_dom("file://" + A + ".html")
kc.expect_eq(html.count('data-name="shared_name"'), 2, "the HTML kernel table: a row per space")
kc.finish()
