"""OpenMP (OMPT) tools side by side (ompt_backend/ompt_chain): count_ompt_tool, an independent tool
that counts every callback per endpoint and kind and checks its own data words (each new parallel
region, task, target region word empty at its begin and its own tag in every later callback, the
inquiries returning the very words its callbacks got), run beside this library by each route:
after ours in OMP_TOOL_LIBRARIES, KOB_TOOL_LIBRARIES, --chain in KOB_ARGS, kob run --chain, and
OMP_TOOL_LIBRARIES naming only the child while LD_PRELOAD starts this library. The routes run with
all of this library's callbacks (--events=all), with some (omp-parallel: the child alone has work,
sync and mutex callbacks) and with none (kokkos: the runtime talks to the child alone). In each,
every count of the tool equals its solo run's, no word check fails, the runtime answers its
ompt_set_callback calls as when alone, the program's exit code and stdout are its own, and this
library's trace counts what it counts alone. On openmp_sample, openmp_offload_sample (target
regions, data ops, submits) and three edge cases (late fulfil, taskwait depend, cancel).
Then children that cannot run (missing, crashing or declining at either step: one line each, the
run goes on as alone) and device tracing on the test runtime of tests/device_tracing: the child's
ompt_start_trace returns 0 on devices this library traces (one line), and 1 when omp-device is not
in --events."""
import argparse
import os
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--count-tool", required=True)
ap.add_argument("--sample", required=True)
ap.add_argument("--offload", required=True)
ap.add_argument("--edge", required=True)
ap.add_argument("--device-runtime", required=True)
a = ap.parse_args()
lib, kob, count = (os.path.abspath(p) for p in (a.lib, a.kob, a.count_tool))
sample, offload, edge, device_runtime = (os.path.abspath(p) for p in (a.sample, a.offload, a.edge, a.device_runtime))

wd = kc.workdir()
UNSET = ("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "OMP_TOOL_LIBRARIES", "KOB_TOOL_LIBRARIES",
         "COUNT_OMPT_START", "COUNT_OMPT_INIT", "COUNT_OMPT_TRACE")
BASE = {"OMP_NUM_THREADS": "2", "KMP_WARNINGS": "0", "OMP_CANCELLATION": "true"}
# Counts that depend on timing (openmp_sample's header): dependence pairs found still open, and
# taskloop chunks.
TIMING = ("task_dependence", "dispatch 4")


def run(name, cmd, env):
    """Exit code, stdout, stderr lines, and the tool's JSON if it wrote one."""
    out = os.path.join(wd, name + ".count.json")
    rc, stdout, stderr = kc.run(cmd, {**BASE, "COUNT_OMPT_OUT": out, **env}, cwd=wd, unset=UNSET)
    counts = kc.load_json(out) if os.path.exists(out) else None
    return rc, stdout, stderr.splitlines(), counts


def ours(name, events):
    prefix = os.path.join(wd, name)
    return prefix, f"--output={prefix} --quiet --format=chrome,summary,json --events={events}"


def trace_counts(prefix):
    """Events per category, construct and phase: the name's first word (an offloaded image's code is
    named by file and line in one run, by address in another), less what depends on timing: the
    dependence pairs found still open, and taskloop chunks."""
    doc = kc.load_json(prefix + ".trace.json")
    kc.validate_trace(doc)
    c = Counter((e.get("cat"), str(e.get("name")).split(" ")[0], e.get("ph")) for e in doc["traceEvents"] if e.get("ph") != "M")
    c.pop(("omp.dependence", "dependence", "i"), None)
    c.pop(("omp.dispatch", "taskloop_chunk", "i"), None)
    return c


def steady(counts):
    """The tool's counts less those that depend on timing; a task that yields or is switched to (2
    and 7) counted together (the edge cases' tasks run at once or later)."""
    out = {k: v for k, v in counts.items() if not k.startswith(TIMING) and k not in ("task_schedule 2", "task_schedule 7")}
    out["task_schedule 2|7"] = sum(v for k, v in counts.items() if k in ("task_schedule 2", "task_schedule 7"))
    return out


def expect_same_tool(what, got, solo):
    if not kc.check(got is not None, f"{what}: the tool wrote its counts"):
        return
    kc.expect_eq(got["initialized"], 1, f"{what}: the tool was initialised")
    kc.expect_eq(got["bad"], {}, f"{what}: every data word and inquiry of the tool's was its own")
    kc.expect_eq(steady(got["counts"]), steady(solo["counts"]), f"{what}: the tool's counts as alone")
    kc.expect_eq(got["set_callback"], solo["set_callback"], f"{what}: the runtime's answers to the tool as alone")


PROGRAMS = [("sample", [sample]), ("offload", [offload]), ("late_fulfill", [edge, "detach_late"]),
            ("taskwait_depend", [edge, "taskwait_depend"]), ("cancel", [edge, "cancel_taskgroup"])]
for pname, cmd in PROGRAMS:
    base_rc, base_out, _, _ = run(f"{pname}-plain", cmd, {})
    kc.expect_eq(base_rc, 0, f"{pname}: exit code alone")
    rc, out, _, solo = run(f"{pname}-solo", cmd, {"OMP_TOOL_LIBRARIES": count})
    kc.expect_eq((rc, out), (base_rc, base_out), f"{pname}: exit code and stdout with the tool alone")
    kc.check(solo is not None and solo["bad"] == {} and len(solo["counts"]) > 5,
             f"{pname}: the tool alone counted, its checks all held: {solo and solo['bad']}")
    alone = {}
    for events in ("all", "omp-parallel", "kokkos"):
        prefix, args = ours(f"{pname}-alone-{events}", events)
        rc, out, _, _ = run(f"{pname}-alone-{events}", cmd, {"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
        kc.expect_eq((rc, out), (base_rc, base_out), f"{pname}: exit code and stdout with this library alone ({events})")
        alone[events] = trace_counts(prefix)
    kc.check(sum(alone["all"].values()) > 0 and sum(alone["kokkos"].values()) == 0,
             f"{pname}: this library alone records OpenMP events with --events=all, none with kokkos")

    routes = [("after ours in OMP_TOOL_LIBRARIES", "all", cmd, {"OMP_TOOL_LIBRARIES": f"{lib}:{count}"}),
              ("KOB_TOOL_LIBRARIES", "omp-parallel", cmd, {"OMP_TOOL_LIBRARIES": lib, "KOB_TOOL_LIBRARIES": count}),
              ("--chain", "kokkos", cmd, {"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS_EXTRA": f"--chain={count}"}),
              ("LD_PRELOAD, the child alone in OMP_TOOL_LIBRARIES", "omp-parallel", cmd, {"LD_PRELOAD": lib, "OMP_TOOL_LIBRARIES": count})]
    if pname == "sample":
        routes.append(("kob run --chain", "all", None, {}))
    for i, (what, events, rcmd, env) in enumerate(routes):
        name = f"{pname}-route{i}"
        prefix, args = ours(name, events)
        env = dict(env)
        if rcmd is None:
            rcmd = [kob, "run", f"--chain={count}"] + args.split() + ["--"] + cmd
        else:
            env["KOB_ARGS"] = (args + " " + env.pop("KOB_ARGS_EXTRA", "")).strip()
        what = f"{pname}, {what} (--events={events})"
        rc, out, err, got = run(name, rcmd, env)
        kc.expect_eq((rc, out), (base_rc, base_out), f"{what}: exit code and stdout")
        expect_same_tool(what, got, solo)
        kc.check(not any("kokkos-ompt-bridge:" in l for l in err), f"{what}: no line of this library's: {err}")
        kc.expect_eq(trace_counts(prefix), alone[events], f"{what}: this library's trace counts as alone")
        kc.expect_eq(kc.load_json(prefix + ".summary.json")["dropped_events"], 0, f"{what}: nothing dropped")

# Children that cannot run: one line naming each, the program as alone, this library's trace as alone.
base_rc, base_out, _, _ = run("fail-plain", [sample], {})
prefix, args = ours("fail-alone", "all")
run("fail-alone", [sample], {"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
fail_alone = trace_counts(prefix)
missing = os.path.join(wd, "no-such-tool.so")
for name, env, line in (
        ("missing", {"OMP_TOOL_LIBRARIES": f"{lib}:{missing}"}, f"cannot load the chained tool {missing}"),
        ("start-crash", {"KOB_TOOL_LIBRARIES": count, "COUNT_OMPT_START": "crash"}, "crashed (signal 11) in ompt_start_tool"),
        ("init-crash", {"KOB_TOOL_LIBRARIES": count, "COUNT_OMPT_INIT": "crash"}, "crashed (signal 11) in its initialize"),
        ("init-decline", {"KOB_TOOL_LIBRARIES": count, "COUNT_OMPT_INIT": "decline"}, "declined to start (its initialize returned 0)"),
        ("start-decline", {"KOB_TOOL_LIBRARIES": count, "COUNT_OMPT_START": "decline"}, None)):
    prefix, args = ours(f"fail-{name}", "all")
    rc, out, err, got = run(f"fail-{name}", [sample], {"OMP_TOOL_LIBRARIES": lib, **env, "KOB_ARGS": args})
    kc.expect_eq((rc, out), (base_rc, base_out), f"{name} child: exit code and stdout")
    said = [l for l in err if l.startswith("kokkos-ompt-bridge:")]
    if line is None:  # declining at ompt_start_tool is the OMPT way to say no: libomp says nothing either
        kc.expect_eq(said, [], f"{name} child: no line")
    else:
        kc.check(len(said) == 1 and line in said[0], f"{name} child: one line with {line!r}: {err}")
    kc.expect_eq(trace_counts(prefix), fail_alone, f"{name} child: this library's trace as alone")
    kc.check(got is None or got["counts"] == {}, f"{name} child: no callback reached it: {got and got['counts']}")

# Device tracing: ours while omp-device is in --events (the child's ompt_start_trace returns 0,
# one line says so), the child's when it is not.
for scenario, extra, want in (("full", "", 0), ("no-device-events", "--events=kokkos,omp-parallel,omp-target", 1)):
    prefix = os.path.join(wd, "device-" + scenario)
    rc, out, err, got = run("device-" + scenario, [device_runtime, "--lib", lib, "--scenario", scenario, "--out", prefix + ".runtime.json"],
                            {"KOB_TOOL_LIBRARIES": count, "COUNT_OMPT_TRACE": "1",
                             "KOB_ARGS": f"--output={prefix} --quiet --format=summary,json {extra}".strip()})
    kc.expect_eq(rc, 0, f"device tracing, {scenario}: the test runtime's exit code")
    if not kc.check(got is not None, f"device tracing, {scenario}: the tool wrote its counts"):
        continue
    kc.check(len(got["start_trace"]) > 0 and all(r == want for r in got["start_trace"]),
             f"device tracing, {scenario}: the child's ompt_start_trace returned {want} on every device: {got['start_trace']}")
    said = [l for l in err if "asked to trace a device" in l]
    kc.expect_eq(len(said), 1 if want == 0 else 0, f"device tracing, {scenario}: lines saying the trace stays ours: {said}")
    summary = kc.load_json(prefix + ".summary.json")
    kc.check(summary["dropped_events"] == 0, f"device tracing, {scenario}: nothing dropped")

kc.finish()
