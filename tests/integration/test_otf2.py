"""OTF2 archives hold what the Chrome trace holds: runs a program under the library with
--format=chrome,json,otf2, reads PREFIX.otf2 with `otf2-print` (otf2_read.py, OTF2's own reader) and
checks, against the Chrome trace of the same run:
- one ENTER per complete event, instant and section (same category:name, exact counts), a LEAVE
  for each, properly nested per location and in time order;
- a METRIC per memory counter event, with the same values (Kokkos memory per space);
- a location per thread (and device), a location group per process (device groups made by it);
- the correlation ids as attributes: the kokkos_kernel ids on OpenMP regions, kernel ids;
- regions with the paradigm of their category (Kokkos, OpenMP);
then does the same for `kob convert RUN --to=otf2` of the run's raw trace."""
import argparse
import os
import shutil
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402
import otf2_read  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--arg", action="append", default=[], help="argument of the program")
ap.add_argument("--threads", default="2")
ap.add_argument("--expect-devices", type=int, help="device locations the archive must have")
a = ap.parse_args()

if not shutil.which("otf2-print"):
    kc.check(False, "otf2-print is installed (Debian otf2-tools; scripts/setup.sh installs it)")
    kc.finish()

lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "run")
env = {"OMP_NUM_THREADS": a.threads, "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
       "KOB_ARGS": f"--output={prefix} --quiet --format=chrome,json,otf2"}
report = kc.written_report()
rc, out, err = kc.run([os.path.abspath(a.program)] + a.arg, {**env, "KOB_RUN_REPORT": report}, cwd=wd)
kc.expect_eq(rc, 0, "program exit status")
kc.check(os.path.isfile(prefix + ".otf2/traces.otf2"), "the archive's anchor file PREFIX.otf2/traces.otf2")
kc.check(any(f"{prefix}.otf2" in files for _, files in kc.written(report)), "the files written include the archive")
trace, _ = kc.load_outputs(prefix)
kc.validate_trace(trace)


def expected(doc):
    """(category:name -> count) of what becomes a region ENTER; memory counter values per space."""
    enters = Counter()
    metrics = Counter()
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph in ("X", "i", "b"):
            name = e["name"]
            if e.get("cat") == "omp.mutex":
                name += " " + e["args"]["phase"]
            enters[f"{e['cat']}:{name}"] += 1
        elif ph == "C":
            metrics[(e["name"], e["args"]["bytes"])] += 1
    return enters, metrics


def check_archive(anchor, doc, label):
    try:
        ar = otf2_read.read(anchor)
    except RuntimeError as ex:
        kc.check(False, f"{label}: otf2-print reads the archive ({ex})")
        return
    want_enters, want_metrics = expected(doc)
    regions = ar["regions"]
    enters, leaves, metrics = Counter(), Counter(), Counter()
    nesting_ok = order_ok = True
    kernel_attr = Counter()  # kokkos_kernel attribute values on OpenMP parallel regions
    for loc, evs in ar["events"].items():
        stack, last = [], 0
        for kind, t, ident, attrs in evs:
            order_ok &= t >= last
            last = t
            if kind == "ENTER":
                enters[regions[ident]["canonical"]] += 1
                stack.append(ident)
                if regions[ident]["canonical"] == "omp.parallel:parallel" and "kokkos_kernel" in attrs:
                    kernel_attr[attrs["kokkos_kernel"]] += 1
            elif kind == "LEAVE":
                leaves[regions[ident]["canonical"]] += 1
                nesting_ok &= bool(stack) and stack.pop() == ident
            else:
                metrics[(ar["metrics"][ident].removeprefix("Kokkos "), attrs["value"])] += 1
        nesting_ok &= not stack
        kc.expect_eq(ar["locations"][loc]["events"], len(evs), f"{label}: event count of location {loc} in its definition")
    kc.expect_eq(dict(enters), dict(want_enters), f"{label}: ENTER per category:name = Chrome X/i/b events")
    kc.expect_eq(dict(leaves), dict(want_enters), f"{label}: a LEAVE for every ENTER")
    kc.expect_eq(dict(metrics), dict(want_metrics), f"{label}: METRIC per memory counter event (space, bytes)")
    kc.check(nesting_ok, f"{label}: ENTER/LEAVE nest on every location")
    kc.check(order_ok, f"{label}: every location's events in time order")
    # Correlation: the Kokkos kernel of each OpenMP parallel region, as in the Chrome trace.
    want_kernels = Counter(e["args"]["kokkos_kernel"] for e in kc.events(doc, "omp.parallel", "X") if "kokkos_kernel" in e["args"])
    kc.expect_eq(dict(kernel_attr), dict(want_kernels), f"{label}: kokkos_kernel attributes of the parallel regions")
    # One location per thread track, one process group; devices as accelerator groups made by it.
    tracks = [e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"]
    cpu = sorted(l["name"] for l in ar["locations"].values() if l["type"] == "CPU_THREAD" and not l["name"].startswith("section "))
    kc.expect_eq(cpu, sorted(t for t in tracks if not t.startswith("device ")), f"{label}: a CPU location per thread track (and lane)")
    devices = sorted(l["name"] for l in ar["locations"].values() if l["type"] == "ACCELERATOR_STREAM")
    kc.expect_eq(devices, sorted(t for t in tracks if t.startswith("device ")), f"{label}: a location per device")
    accel = [g for g in ar["groups"].values() if g["type"] == "ACCELERATOR"]
    kc.expect_eq(len(accel), len(devices), f"{label}: an accelerator location group per device")
    if a.expect_devices is not None:
        kc.expect_eq(len(devices), a.expect_devices, f"{label}: device locations")
    procs = [g for g in ar["groups"].values() if g["type"] == "PROCESS"]
    kc.expect_eq(len(procs), 1, f"{label}: one process location group")
    for g in ar["groups"].values():
        if g["type"] == "ACCELERATOR":
            kc.check(g["creator"] is not None, f"{label}: device group {g['name']} made by the process")
    for r in regions.values():
        cat = r["canonical"].split(":", 1)[0]
        want = "KOKKOS" if cat.startswith("kokkos") else "OPENMP" if cat.startswith("omp") else None
        if want:
            kc.expect_eq(r["paradigm"], want, f"{label}: paradigm of region {r['canonical']}")
    kc.check(ar["clock"].get("Ticks per Seconds") == 1000000000, f"{label}: nanosecond timer")
    return enters


lib_enters = check_archive(prefix + ".otf2/traces.otf2", trace, "library")
kc.check(sum(lib_enters.values()) > 10 if lib_enters else False, "the run has events")

# kob convert makes the same archive from the raw trace.
conv = os.path.join(wd, "conv")
rc, _, err = kc.run([a.kob, "convert", prefix + ".kob", f"--output={conv}", "--to=otf2,chrome,json", "--quiet"])
kc.expect_eq(rc, 0, f"kob convert --to=otf2,chrome exit status ({err.strip()})")
conv_trace, _ = kc.load_outputs(conv)
conv_enters = check_archive(conv + ".otf2/traces.otf2", conv_trace, "kob convert")
kc.expect_eq(dict(conv_enters or {}), dict(lib_enters or {}), "kob convert's archive = the library's")
kc.finish()
