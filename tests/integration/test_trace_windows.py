"""The trace writers write a run a window at a time (bounded memory), and several threads make a
window's events (kob convert -j): records a program's raw trace once, converts it with the default
window (these runs fit in one) on one thread, then with windows of 1 and 7 spans (a cut at every
point where one is allowed, or at the first after 7 spans) and on 2 and 3 threads, and checks that
both trace files hold exactly the same content every way: Chrome events, arrows by their two ends,
the .pftrace's slices as a trace reader nests them (by time, then file order), instants, counters,
arrows and tracks. The files written in windows of 1 must differ in their bytes (else no cut
happened and the test proves nothing), unless the run has no point where a cut is allowed
(--no-cut); so must those written on 3 threads (a split .pftrace says its clock first)."""
import argparse
import json
import os
from collections import Counter

import kob_check as kc
import pftrace_decode as pd

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--kind", choices=["kokkos", "openmp"], required=True)
ap.add_argument("--threads", type=int, default=4)
ap.add_argument("--case", default=None, help="argument of the program (an edge case's name)")
ap.add_argument("--no-cut", action="store_true", help="the run has no point where a cut is allowed (target regions throughout)")
a = ap.parse_args()
lib = os.path.abspath(a.lib)

wd = kc.workdir()
raw = os.path.join(wd, "run")
env = {"OMP_NUM_THREADS": str(a.threads), "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={raw} --quiet --format=none"}
if a.kind == "kokkos":
    env["KOKKOS_PROFILE_LIBRARY"] = lib
rc, _, err = kc.run([os.path.abspath(a.program)] + ([a.case] if a.case else []), env, cwd=wd)
kc.expect_eq(rc, 0, f"program exit code ({err[-300:]})")


def convert(name, *extra):
    prefix = os.path.join(wd, name)
    rc, _, err = kc.run([a.kob, "convert", raw + ".kob", "--to=chrome,perfetto", f"--output={prefix}", "--quiet", *extra])
    kc.expect_eq(rc, 0, f"kob convert {' '.join(extra)}: exit status ({err.strip()})")
    return prefix


def chrome_content(prefix):
    with open(prefix + ".trace.json") as f:
        doc = kc.json_load(f)
    kc.validate_trace(doc)
    evs = doc["traceEvents"]
    plain = Counter(json.dumps(e, sort_keys=True) for e in evs if e["ph"] not in ("s", "f"))
    starts = {e["id"]: e for e in evs if e["ph"] == "s"}
    flows = Counter((e["name"], starts[e["id"]]["tid"], starts[e["id"]]["ts"], e["tid"], e["ts"]) for e in evs if e["ph"] == "f")
    kc.expect_eq(len(starts), sum(flows.values()), f"{prefix}: each arrow starts and ends once")
    return plain, flows, json.dumps(doc["otherData"], sort_keys=True)


def pftrace_content(prefix):
    pf = kc.check_pftrace_rules(prefix + ".pftrace")
    name = {u: t["name"] for u, t in pf.tracks.items()}
    kc.expect_eq(len(name), len(set(name.values())), f"{prefix}.pftrace: track names are unique (the comparison keys on them)")
    decoded, problems = pd.slices(pf)
    kc.expect_eq(problems, [], f"{prefix}.pftrace: BEGIN/END balanced on every track")
    slices = Counter((d["cat"], d["name"], name[d["track"]], d["ts"], d["dur"], d["depth"], tuple(sorted(d["args"].items())))
                     for d in decoded)
    instants = Counter((e["cat"], e["name"], name[e["track"]], e["ts"], tuple(sorted(e["args"].items())))
                       for e in pf.events if e["type"] == pd.INSTANT)
    counters = Counter((name[e["track"]], e["ts"], e["value"]) for e in pf.events if e["type"] == pd.COUNTER)
    starts, ends = {}, {}
    for e in pf.events:
        for f in e["flows"]:
            starts[f] = (name[e["track"]], e["ts"])
        for f in e["terminating"]:
            ends[f] = (name[e["track"]], e["ts"])
    kc.expect_eq(sorted(starts), sorted(ends), f"{prefix}.pftrace: flow ids that start and end")
    flows = Counter(starts[i] + ends[i] for i in starts if i in ends)
    return {"tracks": sorted(name.values(), key=str), "slices": slices, "instants": instants, "counters": counters, "flows": flows}


one = convert("one", "-j", "1")
ref_chrome = chrome_content(one)
ref_pf = pftrace_content(one)
kc.check(sum(ref_pf["slices"].values()) > 0, "the run has slices")
ways = {"1": ["--trace-window=1", "-j", "1"], "7": ["--trace-window=7", "-j", "1"], "1 on 3 threads": ["--trace-window=1", "-j", "3"],
        "7 on 2 threads": ["--trace-window=7", "-j", "2"], "one on 3 threads": ["-j", "3"]}
for window, extra in ways.items():
    w = convert("w" + window.replace(" ", "_"), *extra)
    plain, flows, other = chrome_content(w)
    kc.expect_eq(plain - ref_chrome[0], Counter(), f"window {window}: Chrome events not in the one-window trace")
    kc.expect_eq(ref_chrome[0] - plain, Counter(), f"window {window}: Chrome events missing")
    kc.expect_eq(flows, ref_chrome[1], f"window {window}: Chrome arrows by their ends")
    kc.expect_eq(other, ref_chrome[2], f"window {window}: otherData")
    pf = pftrace_content(w)
    for key in ("tracks", "instants", "counters", "flows"):
        kc.expect_eq(pf[key], ref_pf[key], f"window {window}: .pftrace {key}")
    kc.expect_eq(pf["slices"] - ref_pf["slices"], Counter(), f"window {window}: .pftrace slices not in the one-window trace")
    kc.expect_eq(ref_pf["slices"] - pf["slices"], Counter(), f"window {window}: .pftrace slices missing")
    if (window == "1" and not a.no_cut) or window == "one on 3 threads":
        with open(one + ".pftrace", "rb") as f1, open(w + ".pftrace", "rb") as f2:
            kc.check(f1.read() != f2.read(), f"window {window}: the .pftrace was written in more than one window or by more than one thread")
print(f"{sum(ref_pf['slices'].values())} slices, {sum(ref_pf['flows'].values())} arrows, "
      f"{sum(ref_chrome[0].values())} Chrome events: the same in windows of 1 and 7 spans, on 1, 2 and 3 threads")
kc.finish()
