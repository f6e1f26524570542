"""kob diff's noise model on raw traces of known call distributions (make_noisy_run): four kernels in
a region, every call jittered (8% log-normal, 3% of calls 1.5x to 3x longer), no timing threshold:
- two runs of the same distribution (seeds 1 and 2; also several seed pairs, and 3 runs a side):
  no row slower or faster, every kernel and the region judged "within noise", exit 0 with
  --fail-above=10;
- "gamma" twice as slow in B: gamma alone slower, its 95% interval and median change near +100%,
  the region slower too (it holds gamma), --fail-above=10 exits 3 naming gamma; B -> A: gamma faster,
  exit 0;
- with 2 calls a run: "few calls", no verdict; with 3 runs a side of 2 calls, judged;
- runs given by a pattern (quoted, kob expands it) and --vs: the same report as the runs listed."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kob", required=True)
ap.add_argument("--maker", required=True)
a = ap.parse_args()
kob, maker = os.path.abspath(a.kob), os.path.abspath(a.maker)
wd = kc.workdir()
CALLS = 200
KERNELS = ["alpha", "beta", "delta", "gamma"]


def make(name, seed, slow="none", calls=CALLS):
    path = os.path.join(wd, name)
    rc, out, err = kc.run([maker, path + ".kob", str(seed), slow, str(calls)])
    kc.expect_eq(rc, 0, f"make_noisy_run {name} ({err})")
    return path


def diff(*args):
    rc, out, err = kc.run([kob, "diff"] + list(args) + ["--json"], cwd=wd)
    try:
        return rc, kc.json_loads(out), [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip()]
    except ValueError:
        kc.check(False, f"kob diff {args}: JSON on stdout ({rc}, {out[:300]!r}, {err[-300:]!r})")
        return rc, {"kernels": [], "regions": [], "regressions": []}, []


def statuses(d):
    return {r["name"]: r["status"] for r in d["kernels"] + d["regions"]}


# The same distribution: nothing marked, several seed pairs.
for s1, s2 in ((1, 2), (3, 4), (5, 6), (7, 8)):
    A, B = make(f"same{s1}", s1), make(f"same{s2}", s2)
    rc, d, errs = diff(A, B, "--fail-above=10")
    kc.expect_eq((rc, errs, d["regressions"]), (0, [], []), f"same distribution, seeds {s1}/{s2}: exit 0, no regression")
    kc.expect_eq(statuses(d), {**{k: "within_noise" for k in KERNELS}, "iteration": "within_noise"},
                 f"same distribution, seeds {s1}/{s2}: every row within noise")
    for r in d["kernels"]:
        lo, hi = r["ci95_pct"]
        kc.check(r["judged"] and lo <= r["median_change_pct"] <= hi and lo < 0 < hi,
                 f"same distribution: {r['name']}: the 95% interval holds the change and 0: {r}")
    kc.expect_eq(d["rows_judged"], 5, "four kernels and the region judged")

# Several runs a side, listed and by pattern.
runs_a = [make(f"ra{i}", 10 + i) for i in range(3)]
runs_b = [make(f"rb{i}", 20 + i) for i in range(3)]
rc, d, errs = diff(*runs_a, "--vs", *runs_b, "--fail-above=10")
kc.expect_eq((rc, errs, d["regressions"]), (0, [], []), "3 runs a side, same distribution: exit 0, no regression")
kc.expect_eq(set(statuses(d).values()), {"within_noise"}, "3 runs a side: every row within noise")
kc.expect_eq((len(d["a"]["paths"]), len(d["b"]["paths"])), (3, 3), "3 runs a side: the paths")
gamma = {r["name"]: r for r in d["kernels"]}["gamma"]
kc.expect_eq((gamma["calls_a"], gamma["calls_b"]), (CALLS, CALLS), "3 runs a side: calls per run")
rc2, d2, errs2 = diff(os.path.join(wd, "ra*"), "--vs", os.path.join(wd, "rb?.kob"), "--fail-above=10")
kc.expect_eq((rc2, d2["a"]["paths"], d2["b"]["paths"]), (0, d["a"]["paths"], d["b"]["paths"]), "patterns name the same runs")
kc.expect_eq(d2["kernels"], d["kernels"], "patterns: the same report (the bootstrap is seeded)")

# One kernel twice as slow.
A, B = make("base", 31), make("slow", 32, "gamma")
rc, d, errs = diff(A, B, "--fail-above=10")
st = statuses(d)
kc.expect_eq(st, {"alpha": "within_noise", "beta": "within_noise", "delta": "within_noise", "gamma": "slower",
                  "iteration": "slower"}, "gamma 2x: gamma and the region holding it slower, the rest within noise")
g = {r["name"]: r for r in d["kernels"]}["gamma"]
kc.check(80 < g["median_change_pct"] < 120 and 50 < g["ci95_pct"][0] and g["ci95_pct"][1] < 150 and g["beyond_noise"],
         f"gamma: median change near +100%, its interval too: {g}")
kc.expect_eq(rc, 3, f"gamma 2x --fail-above=10: exit 3 ({errs})")
kc.check(any('kernel "gamma"' in l for l in errs) and all(l.startswith("kob: regression: ") for l in errs),
         f"gamma 2x: stderr names gamma: {errs}")
kc.expect_eq(sorted(r["name"] for r in d["regressions"]), ["gamma", "iteration"], "regressions: gamma and its region")
rc, d, errs = diff(A, B, "--fail-above=150")
kc.expect_eq((rc, d["regressions"]), (0, []), "gamma 2x --fail-above=150: under the threshold")
rc, d, errs = diff(B, A, "--fail-above=10")
kc.expect_eq((rc, statuses(d)["gamma"], errs), (0, "faster", []), "B -> A: gamma faster, exit 0")

# Few calls: no verdict with 2 a run; three runs a side of 2 calls make 6 a side.
A, B = make("few_a", 41, "gamma", 2), make("few_b", 42, "gamma", 2)
rc, d, errs = diff(A, B, "--fail-above=10")
kc.expect_eq((rc, set(statuses(d).values())), (0, {"few_calls"}), "2 calls a side: few calls, no regression")
kc.check(all(r["ci95_pct"] is None and not r["judged"] for r in d["kernels"]), "2 calls: no interval")
fa = [make(f"fa{i}", 50 + i, "none", 2) for i in range(3)]
fb = [make(f"fb{i}", 60 + i, "gamma", 2) for i in range(3)]
rc, d, errs = diff(*fa, "--vs", *fb)
kc.check(all(r["judged"] for r in d["kernels"]), f"3 runs of 2 calls a side: judged: {statuses(d)}")

# Usage: one run without --vs.
rc, out, err = kc.run([kob, "diff", A], cwd=wd)
errs = [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip()]
kc.check(rc == 2 and len(errs) == 1 and errs[0].startswith("kob: "), f"one run, no --vs: exit 2, one line ({rc}, {errs})")

kc.finish()
