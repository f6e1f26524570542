"""Runs a sample with --format=perfetto,chrome and checks that the .pftrace, read by an independent
decoder, holds the same events as the Chrome trace: slices (with durations and args), instants,
counters, sections, flows, tracks with the process and thread names; that slices nest on every
track; that every track an event uses is described; that interning starts with a cleared state;
that the file keeps the rules of Perfetto's docs (pftrace_decode.rule_problems)."""
import argparse
import json
import os
from collections import Counter

import kob_check as kc
import pftrace_decode as pd

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kind", choices=["kokkos", "openmp"], required=True)
ap.add_argument("--threads", type=int, default=4)
ap.add_argument("--case", default=None, help="argument of the program (an edge case's name)")
ap.add_argument("--expect", default="", help="what this program's trace must have: threads, sections, flows, lanes, devices")
a = ap.parse_args()
expect = set(filter(None, a.expect.split(",")))
lib = os.path.abspath(a.lib)

wd = kc.workdir()
prefix = os.path.join(wd, "out")
env = {"OMP_NUM_THREADS": str(a.threads), "OMP_TOOL_LIBRARIES": lib,
       "KOB_ARGS": f"--output={prefix} --quiet --format=perfetto,chrome"}
if a.kind == "kokkos":
    env["KOKKOS_PROFILE_LIBRARY"] = lib
report = kc.written_report()
rc, out, err = kc.run([os.path.abspath(a.program)] + ([a.case] if a.case else []), {**env, "KOB_RUN_REPORT": report}, cwd=wd)
kc.expect_eq(rc, 0, "exit code")
kc.check([f for _, f in kc.written(report)] == [[prefix + ".kob", f"{prefix}.pftrace", f"{prefix}.trace.json"]],
         f"both files written: {err.strip().splitlines()[-1:]}")
kc.check(not os.path.exists(prefix + ".summary.txt"), "no summary file when not asked for")

with open(prefix + ".trace.json") as f:
    doc = kc.json_load(f)
kc.validate_trace(doc)
ch = doc["traceEvents"]
pf = kc.check_pftrace_rules(prefix + ".pftrace")

# Interning: the first packet clears the sequence's state; every event packet after needs it.
kc.expect_eq(pf.first_flags, 1, "first packet: SEQ_INCREMENTAL_STATE_CLEARED")
kc.check(all(e["seq_flags"] in (2,) for e in pf.events if e["type"] != pd.COUNTER and e["type"] != pd.END),
         "named events carry SEQ_NEEDS_INCREMENTAL_STATE")

# Tracks: every track an event names is described; process pid and name; thread names.
pid = next(e["pid"] for e in ch if e["ph"] == "M" and e["name"] == "process_name")
pname = next(e["args"]["name"] for e in ch if e["ph"] == "M" and e["name"] == "process_name")
procs = [t for t in pf.tracks.values() if t["process"]]
kc.expect_eq([(t["process"]["pid"], t["process"]["name"]) for t in procs], [(pid, pname)], "one process track")
used = {e["track"] for e in pf.events}
kc.expect_eq(sorted(used - set(pf.tracks)), [], "tracks used but not described")
ch_names = {e["tid"]: e["args"]["name"] for e in ch if e["ph"] == "M" and e["name"] == "thread_name"}
pf_name = {u: t["name"] for u, t in pf.tracks.items()}
for t in pf.tracks.values():
    if t["thread"]:
        kc.expect_eq((t["thread"]["pid"], ch_names.get(t["thread"]["tid"])), (pid, t["name"]),
                     f"thread track {t['thread']['tid']}: pid and the Chrome trace's name")
if "threads" in expect:
    kc.check(sum(1 for t in pf.tracks.values() if t["thread"]) >= a.threads, "a thread track per OpenMP thread")
if "lanes" in expect:
    kc.check(any(n and n.endswith("mutex holds") and not t["thread"] for n, t in ((t["name"], t) for t in pf.tracks.values())),
             "a mutex-hold lane, as a named track of the process")
if "devices" in expect:
    kc.check(any(t["name"] and t["name"].startswith("device ") and t["parent"] for t in pf.tracks.values()),
             "a device track, as a named track of the process")
kc.check(set(ch_names.values()) <= set(pf_name.values()), f"every Chrome thread name is a track: {set(ch_names.values()) - set(pf_name.values())}")
kc.expect_eq(len(set(ch_names.values())), len(ch_names), "Chrome thread names are unique (the comparison keys on them)")

# Slices per track, as trace readers see them (by time, equal times in file order): BEGIN/END
# balanced and nested.
offset = None
slices = []  # (cat, name, track name, start, dur, args)
section_slices = []
decoded, problems = pd.slices(pf)
kc.expect_eq(problems, [], "BEGIN/END balanced on every track")
for d in decoded:
    (section_slices if d["cat"] == "kokkos.section" else slices).append(
        (d["cat"], d["name"], pf_name[d["track"]], d["ts"], d["dur"], tuple(sorted(d["args"].items()))))

# The same events as the Chrome trace, times compared as ns from the Chrome trace's zero.
def ns(us):
    return round(us * 1000)

begins = [e for e in pf.events if e["type"] == pd.BEGIN]
first_x = min((e for e in ch if e["ph"] == "X"), key=lambda e: e["ts"])
offset = min(e["ts"] for e in begins if e["cat"] == first_x["cat"]) - ns(first_x["ts"])
ch_slices = Counter((e["cat"], e["name"], ch_names[e["tid"]], ns(e["ts"]) + offset, ns(e["dur"]),
                     tuple(sorted(e.get("args", {}).items()))) for e in ch if e["ph"] == "X")
kc.expect_eq(sum(ch_slices.values()), len(slices), "slice count")
kc.expect_eq(Counter((c, n) for c, n, *_ in slices), Counter((c, n) for c, n, *_ in ch_slices.elements()),
             "slices per category and name")
kc.expect_eq(Counter(slices) - ch_slices, Counter(), "slices (track, start, duration, args) not in the Chrome trace")
kc.expect_eq(ch_slices - Counter(slices), Counter(), "Chrome slices missing from the .pftrace")

ch_inst = Counter((e["cat"], e["name"], ch_names[e["tid"]], ns(e["ts"]) + offset, tuple(sorted(e.get("args", {}).items())))
                  for e in ch if e["ph"] == "i")
pf_inst = Counter((e["cat"], e["name"], pf_name[e["track"]], e["ts"], tuple(sorted(e["args"].items())))
                  for e in pf.events if e["type"] == pd.INSTANT)
kc.expect_eq(pf_inst, ch_inst, "instants")

ch_count = Counter((e["name"], ns(e["ts"]) + offset, e["args"]["bytes"]) for e in ch if e["ph"] == "C")
pf_count = Counter((pf_name[e["track"]], e["ts"], e["value"]) for e in pf.events if e["type"] == pd.COUNTER)
kc.expect_eq(pf_count, ch_count, "counter values")
kc.check(all(pf.tracks[e["track"]]["counter"] for e in pf.events if e["type"] == pd.COUNTER), "counters on counter tracks")

opened = {}
ch_sections = Counter()
for e in ch:
    if e["ph"] == "b":
        opened[(e["cat"], e["id"])] = e
    elif e["ph"] == "e":
        b = opened.pop((e["cat"], e["id"]))
        ch_sections[(b["name"], ns(b["ts"]) + offset, ns(e["ts"]) - ns(b["ts"]))] += 1
kc.expect_eq(Counter((n, s, d) for _, n, _, s, d, _ in section_slices), ch_sections, "sections")
if "sections" in expect:
    kc.check(len(ch_sections) > 0, "the sample has sections")

# Flows: each id starts once and ends once, between the same points as the Chrome arrows.
starts, ends = {}, {}
for e in pf.events:
    for f in e["flows"]:
        kc.check(f not in starts, f"flow {f} starts twice")
        starts[f] = (pf_name[e["track"]], e["ts"])
    for f in e["terminating"]:
        kc.check(f not in ends, f"flow {f} ends twice")
        ends[f] = (pf_name[e["track"]], e["ts"])
kc.expect_eq(sorted(starts), sorted(ends), "flow ids that start and end")
ch_s = {e["id"]: e for e in ch if e["ph"] == "s"}
ch_flows = Counter((ch_names[s["tid"]], ns(s["ts"]) + offset, ch_names[f["tid"]], ns(f["ts"]) + offset)
                   for f in ch if f["ph"] == "f" for s in [ch_s[f["id"]]])
pf_flows = Counter(starts[i] + ends[i] for i in starts if i in ends)
kc.expect_eq(pf_flows, ch_flows, "flows (from track and time, to track and time)")
if "flows" in expect:
    kc.check(len(ch_flows) > 0, "the sample has correlation arrows")

# The counts the Chrome tests check, read from each file on its own: kernels, regions, parallel
# regions, implicit tasks per thread, arrows.
def slice_count(cat, names=None):
    return sum(1 for c, n, *_ in slices if c == cat and (names is None or n in names))
for cat in ("kokkos.kernel", "kokkos.region", "omp.parallel"):
    kc.expect_eq(slice_count(cat), sum(1 for e in ch if e["ph"] == "X" and e["cat"] == cat), f"{cat} slices")
kc.expect_eq(Counter(t for c, _, t, *_ in slices if c == "omp.implicit_task"),
             Counter(ch_names[e["tid"]] for e in ch if e["ph"] == "X" and e["cat"] == "omp.implicit_task"),
             "implicit tasks per thread")
kc.expect_eq(len(starts), sum(1 for e in ch if e["ph"] == "f"), "flows: as many as the Chrome trace's arrows")
kc.expect_eq(Counter(n for _, n, *_ in slices), Counter(e["name"] for e in ch if e["ph"] == "X"), "slice names")
if a.kind == "kokkos":
    kc.check(slice_count("kokkos.kernel") > 0, "the Kokkos sample has kernels")
kc.check(slice_count("omp.parallel") > 0, "the sample has parallel regions")

# Times: a sequence clock, incremental, against CLOCK_MONOTONIC_RAW as the trace's clock.
kc.expect_eq(pf.primary_clock, pd.MONOTONIC_RAW, "the trace's clock")
kc.check(pf.incremental > pf.absolute, f"most packet times are deltas ({pf.incremental} deltas, {pf.absolute} absolute)")

print(f"pftrace: {pf.packets} packets, {len(slices)} slices, {sum(pf_inst.values())} instants, "
      f"{sum(pf_count.values())} counters, {len(section_slices)} sections, {len(starts)} flows, {len(pf.tracks)} tracks, "
      f"times: {pf.incremental} deltas, {pf.absolute} absolute")
kc.finish()
