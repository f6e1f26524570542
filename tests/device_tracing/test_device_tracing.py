"""Device tracing (OpenMP 5.1, 4.6.2) against the test runtime in fake_runtime.cpp.

Runs device_tracing_test in three scenarios and checks the trace the library wrote against what
the runtime reports it did (RESULT.json: calls it saw, every record it wrote with its true host
times on CLOCK_MONOTONIC_RAW):
  full              two traced devices (EMI and 5.0 record types), three that are not (no lookup,
                    null handle, no tracing entry points); buffers completed out of order, one
                    partly first, one empty, one twice, one never handed out, one with its begin
                    cursor past the end; native, unknown-kind and other OMPT records; 24000
                    records more than the initial pool holds, then 12000 reusing it; records
                    delivered only by device_finalize and only by the tool's finalize.
  region            --device-trace-region=offload: the pause/resume calls and which records stay.
  no-device-events  --events without omp-device: tracing never starts.
Every expected record must appear exactly once as an omp.device X event on its device track, at
its true host time within 5 us (the trace's time origin found from Kokkos profile events whose
host time the runtime bracketed) and with its true duration within 5 us.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import kob_check as kc  # noqa: E402

# 5 us: far below what an untranslated offset (seconds) or an ignored drift (137 ppm of the run)
# would show, and above the tool's own TSC calibration jitter on a loaded 2-core machine (~0.5 us).
TOL_NS = 5000.0
DEVICE_TID_BASE = 1000000
TARGET_TYPES = (8, 33)


def run_scenario(prog, lib, scenario, kob_args=""):
    wd = kc.workdir()
    prefix = os.path.join(wd, scenario)
    result = os.path.join(wd, scenario + ".runtime.json")
    rc, out, err = kc.run([prog, "--lib", lib, "--scenario", scenario, "--out", result],
                          env_extra={"KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME} {kob_args}".strip()},
                          unset=("KOKKOS_TOOLS_ARGS", "KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"))
    if not kc.expect_eq(rc, 0, f"[{scenario}] device_tracing_test exit status (stderr: {err[-2000:]})"):
        return None, None, err
    with open(result) as f:
        rt = kc.json_load(f)
    with open(prefix + ".trace.json") as f:
        trace = kc.json_load(f)
    kc.expect_eq(rt["problems"], [], f"[{scenario}] protocol problems the runtime saw in the tool's calls")
    kc.validate_trace(trace)
    return rt, trace, err


def thread_names(trace):
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def time_offset(scenario, trace, rt):
    """ns to add to ts*1000 to get CLOCK_MONOTONIC_RAW ns. Device events have ts = their host ns
    minus the trace's origin exactly; host events get theirs through the tool's TSC calibration,
    exact at the tool's start and drifting away from it by up to a microsecond over a short run on
    a loaded machine. So the reference is the first group of anchors (right after start-up), the
    one with the tightest bracket of host times around it. Returns (offset, how far the other
    groups' tightest anchors lie from it, the bracket used)."""
    ts = {}
    for e in kc.events(trace, "kokkos.event"):
        ts[e["name"]] = max(ts.get(e["name"], e["ts"]), e["ts"])  # the measured (second) event
    groups = {}
    for a in rt["anchors"]:
        if not kc.check(a["name"] in ts, f"[{scenario}] anchor event {a['name']} in the trace"):
            continue
        groups.setdefault(a["group"], []).append(
            (a["after"] - a["before"], (a["before"] + a["after"]) / 2 - ts[a["name"]] * 1000.0))
    if not groups:
        return None, 0, 0
    best = [min(groups[g]) for g in sorted(groups)]
    width, offset = best[0]
    return offset, max(abs(o - offset) for _, o in best), width


def device_events(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "omp.device" and e.get("ph") == "X"]


def match_records(scenario, trace, rt, devices):
    """Every expected record exactly once, at its true time. Returns figures."""
    offset, spread, width = time_offset(scenario, trace, rt)
    evs = device_events(trace)
    names = thread_names(trace)
    figures = {"anchor_spread_ns": spread, "anchor_bracket_ns": width, "records": 0, "events": len(evs),
               "max_ts_err_ns": 0.0, "max_dur_err_ns": 0.0}
    if offset is None:
        kc.check(False, f"[{scenario}] no anchor to place the trace's time origin")
        return figures
    by_host_op = {}
    targets = {}
    for e in evs:
        a = e.get("args", {})
        if a.get("host_op_id", 0) != 0:
            by_host_op.setdefault((e["tid"], a["host_op_id"]), []).append(e)
        else:
            targets.setdefault((e["tid"], a.get("target_id")), []).append(e)
    expected_events = 0
    for d in devices:
        dev = rt["devices"][d]
        tid = DEVICE_TID_BASE + d
        kc.expect_eq(names.get(tid), f"device {d} ({rt['type']})", f"[{scenario}] name of the track of device {d}")
        target_recs = {}
        for rec in dev["expected"]:
            rtype, hop, tgt, start, end, size, kind, endpoint = rec
            figures["records"] += 1
            if rtype in TARGET_TYPES:
                target_recs.setdefault(tgt, []).append(rec)
                continue
            expected_events += 1
            found = by_host_op.get((tid, hop), [])
            if not kc.check(len(found) == 1, f"[{scenario}] device {d} host_op_id {hop}: {len(found)} events, expected 1"):
                continue
            e = found[0]
            err = e["ts"] * 1000.0 + offset - start
            derr = e["dur"] * 1000.0 - (end - start)
            figures["max_ts_err_ns"] = max(figures["max_ts_err_ns"], abs(err))
            figures["max_dur_err_ns"] = max(figures["max_dur_err_ns"], abs(derr))
            kc.check(abs(err) <= TOL_NS, f"[{scenario}] device {d} host_op_id {hop}: start off by {err:.0f} ns")
            kc.check(abs(derr) <= TOL_NS, f"[{scenario}] device {d} host_op_id {hop}: duration off by {derr:.0f} ns")
            a = e["args"]
            kc.expect_eq(a.get("target_id"), tgt, f"[{scenario}] device {d} host_op_id {hop} target_id")
            kc.expect_eq(a.get("device"), d, f"[{scenario}] device {d} host_op_id {hop} device")
            if "bytes" in a or "requested_teams" in a:
                kc.expect_eq((a["bytes"] if "bytes" in a else a["requested_teams"]), size, f"[{scenario}] host_op_id {hop} bytes/teams")
        # Target records: begin and end, either as two events or as one span.
        for tgt, recs in target_recs.items():
            found = sorted(targets.get((tid, tgt), []), key=lambda e: e["ts"])
            recs = sorted(recs, key=lambda r: r[3])
            if len(found) == len(recs):
                pairs = [(e["ts"], r[3]) for e, r in zip(found, recs)]
                expected_events += len(recs)
            elif len(found) == 1 and len(recs) == 2:
                pairs = [(found[0]["ts"], recs[0][3]), (found[0]["ts"] + found[0]["dur"], recs[1][3])]
                expected_events += 1
            else:
                kc.check(False, f"[{scenario}] device {d} target {tgt}: {len(found)} events for {len(recs)} records")
                continue
            for ts, start in pairs:
                err = ts * 1000.0 + offset - start
                figures["max_ts_err_ns"] = max(figures["max_ts_err_ns"], abs(err))
                kc.check(abs(err) <= TOL_NS, f"[{scenario}] device {d} target {tgt}: time off by {err:.0f} ns")
        for hop in dev["skipped_host_op_ids"]:
            kc.check((tid, hop) not in by_host_op, f"[{scenario}] native record {hop} is not in the trace")
    kc.expect_eq(len(evs), expected_events, f"[{scenario}] number of omp.device events")
    return figures


def counters(trace):
    return trace["otherData"].get("device_tracing", {})


def check_full(prog, lib):
    rt, trace, err = run_scenario(prog, lib, "full")
    if rt is None:
        return
    figures = match_records("full", trace, rt, [0, 1])
    od = trace["otherData"]
    kc.expect_eq(od.get("devices"), {"0": "tracing", "1": "tracing", "2": "callbacks", "3": "callbacks", "4": "callbacks"},
                 "[full] otherData devices")
    c = counters(trace)
    d0, d1 = rt["devices"][0], rt["devices"][1]
    n_expected = len(d0["expected"]) + len(d1["expected"])
    x = rt["extra"]

    def counter(key, value, what=None):
        kc.expect_eq(c.get(key), str(value), f"[full] otherData device_tracing.{key}" + (f" ({what})" if what else ""))

    counter("records", n_expected, "every OMPT target record recorded")
    counter("records_native", 2)
    counter("records_abstract", 1)
    counter("records_other_ompt", 2, "target_map and thread_begin records skipped")
    counter("records_unknown_type", 1)
    counter("records_invalid", x["bad_completions_cursor"], "the begin cursor past the end")
    counter("records_bad_time", 0)
    counter("records_end_before_start", 0)
    counter("walks_cut", 0)
    counter("buffer_completions_duplicate", x["bad_completions_duplicate"])
    counter("buffer_completions_unknown", x["bad_completions_unknown"])
    counter("buffer_completions", d0["completions"] + d1["completions"])
    counter("buffers_requested", d0["request_calls"] + d1["request_calls"])
    counter("buffer_requests_denied", 0)
    counter("buffers_returned", d0["completions_owned"] + d1["completions_owned"] - x["bad_completions_duplicate"]
            - x["bad_completions_unknown"], "every buffer handed back returns to the pool")
    counter("buffers_outstanding", 0)
    kc.check(int(c.get("buffer_completions_empty", "0")) >= x["empty_completions"], "[full] the empty completion counted")
    # The pool: 4 buffers per device up front, one more only when all are out at once.
    pool = sum(max(4, d["max_held"]) for d in (d0, d1))
    counter("buffers_allocated", pool, "initial pool, grown to the most buffers out at once")
    kc.check(d0["max_held"] > 4, f"[full] the volume phase had more buffers out than the initial pool ({d0['max_held']})")
    kc.expect_eq(x["addresses_after_reuse"], x["addresses_before_reuse"], "[full] phase C reuses the pool's buffers")
    for d in (d0, d1):
        n = d["num"]
        kc.expect_eq(d["start_calls"], 1, f"[full] device {n} ompt_start_trace calls")
        kc.expect_eq(d["flush_calls"], 1, f"[full] device {n} ompt_flush_trace calls")
        kc.expect_eq(d["stop_calls"], 1, f"[full] device {n} ompt_stop_trace calls")
        kc.expect_eq(d["calls_after_stop"], 0, f"[full] device {n} calls after stop")
        kc.expect_eq(d["held_at_end"], 0, f"[full] device {n} buffers still held by the runtime")
        kc.expect_eq(d["pause_args"], [], f"[full] device {n} ompt_pause_trace calls without --device-trace-region")
        kc.expect_eq(sorted(d["set_trace_ompt_etypes"]), [8, 9, 10, 33, 34, 35], f"[full] device {n} set_trace_ompt types")
        kc.check(d["distinct_buffers"] <= max(4, d["max_held"]), f"[full] device {n} buffers come from the pool")
        kc.check(d["completes_off_helper"] is False and d["requests_on_helper"] is False,
                 f"[full] device {n}: completions on the helper thread, requests on the writing thread")
        kc.expect_eq(d["dropped_disabled"], 0, f"[full] device {n} records dropped as not enabled")
    for n in (2, 3, 4):
        d = rt["devices"][n]
        kc.expect_eq((d["start_calls"], d["set_trace_ompt_etypes"]), (0, []), f"[full] device {n} is not traced")
    for text in ("already given back", "never handed out", "invalid trace record", "of unknown type 7",
                 "null device handle"):
        kc.expect_eq(err.count(text), 1, f"[full] one warning line with '{text}'")
    print(f"full: {figures['records']} records written ({len(d0['expected'])} on device 0, {len(d1['expected'])} on "
          f"device 1), {figures['events']} omp.device events; max |ts error| {figures['max_ts_err_ns']:.0f} ns, "
          f"max |dur error| {figures['max_dur_err_ns']:.0f} ns (time origin from an anchor bracketed within "
          f"{figures['anchor_bracket_ns']} ns; later anchors drift from it by up to {figures['anchor_spread_ns']:.0f} ns); tool "
          f"calibration bracket <= "
          f"{c.get('calibration_max_bracket_ns')} ns; buffers: {c.get('buffers_requested')} requests, "
          f"{c.get('buffer_completions')} completions ({c.get('buffer_completions_partial')} partial, "
          f"{c.get('buffer_completions_empty')} empty), pool {c.get('buffers_allocated')} buffers "
          f"(device 0: at most {d0['max_held']} out at once, {d0['distinct_buffers']} distinct addresses)")


def check_region(prog, lib):
    rt, trace, err = run_scenario(prog, lib, "region", "--device-trace-region=offload")
    if rt is None:
        return
    d0 = rt["devices"][0]
    kc.expect_eq(d0["pause_args"], [1, 0, 1, 0, 1], "[region] ompt_pause_trace calls (1 pause, 0 resume)")
    figures = match_records("region", trace, rt, [0])
    kc.expect_eq(sorted(r[1] for r in d0["expected"]), [2003, 2004, 2005, 2007, 2008, 2100],
                 "[region] records written while the region was open")
    kc.expect_eq(d0["dropped_paused"], 4, "[region] records the runtime dropped while paused")
    c = counters(trace)
    kc.expect_eq((c.get("pause_calls"), c.get("resume_calls")), ("3", "2"), "[region] otherData pause/resume calls")
    kc.expect_eq(trace["otherData"].get("devices"), {"0": "tracing"}, "[region] otherData devices")
    kc.expect_eq((d0["start_calls"], d0["stop_calls"], d0["calls_after_stop"]), (1, 1, 0), "[region] start/stop")
    print(f"region: pause calls {d0['pause_args']}, {figures['events']} omp.device events (6 expected), "
          f"{d0['dropped_paused']} records dropped while paused; max |ts error| {figures['max_ts_err_ns']:.0f} ns")


def check_no_device_events(prog, lib):
    rt, trace, err = run_scenario(prog, lib, "no-device-events", "--events=kokkos,omp-parallel,omp-target")
    if rt is None:
        return
    d0 = rt["devices"][0]
    kc.expect_eq((d0["start_calls"], d0["set_trace_ompt_etypes"], d0["request_calls"]), (0, [], 0),
                 "[no-device-events] tracing never started")
    kc.expect_eq(d0["dropped_not_tracing"], 2, "[no-device-events] the runtime dropped its records")
    kc.expect_eq(len(device_events(trace)), 0, "[no-device-events] no omp.device events")
    kc.expect_eq(trace["otherData"].get("devices"), {"0": "callbacks"}, "[no-device-events] otherData devices")
    kc.check("records" not in counters(trace), "[no-device-events] no device tracing counters")
    print(f"no-device-events: start_trace calls {d0['start_calls']}, omp.device events {len(device_events(trace))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--lib", required=True)
    args = ap.parse_args()
    check_full(args.program, args.lib)
    check_region(args.program, args.lib)
    check_no_device_events(args.program, args.lib)
    kc.finish()


if __name__ == "__main__":
    main()
