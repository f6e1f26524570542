"""Shared checks for the integration tests: run a program with and without the library, load the
files it writes, and check them against the trace schema of CONTRACT.md."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

REQUIRED_ARGS = {
    "kokkos.kernel": ("id", "kind", "devid", "device", "region"),
    "kokkos.fence": ("id", "devid"),
    "kokkos.region": ("path",),
    "kokkos.deep_copy": ("id", "dst_space", "dst_name", "src_space", "src_name", "bytes"),
    "kokkos.alloc": ("space", "ptr", "bytes"),
    "kokkos.dealloc": ("space", "ptr", "bytes"),
    "kokkos.memory": ("bytes",),
    "kokkos.section": ("section",),
    "kokkos.dual_view": ("op", "on_device"),
    "omp.parallel": ("parallel_id", "requested_team_size", "flags"),
    "omp.implicit_task": ("parallel_id", "thread_num", "team_size"),
    "omp.work": ("count",),
    "omp.sync": ("wait_ns",),
    "omp.task": ("task_id", "flags"),
    "omp.mutex": ("wait_id", "phase"),
    "omp.target": ("target_id", "device"),
    "omp.target_data": ("host_op_id", "src_device", "dst_device", "bytes"),
    "omp.target_submit": ("host_op_id", "requested_teams"),
    "omp.device": ("host_op_id",),
    "omp.error": ("severity", "message"),
    "omp.task_fulfill": ("task_id",),
    "tool": ("records",),
}

failures = []


def sweep_empty_omp_registrations():
    """libomp registers each process in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>, a file it sizes
    right after creating it and removes at exit. A process killed in between (these tests kill
    and crash many) leaves it empty, and a later process that gets the same pid dies of SIGBUS in
    its first parallel region reading it (LLVM libomp 19, seen here). Removes such files of dead
    processes of this user: nothing else."""
    uid = os.getuid()
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    for name in names:
        m = re.fullmatch(r"__KMP_REGISTERED_LIB_(\d+)_(\d+)", name)
        if not m or int(m.group(2)) != uid:
            continue
        path = os.path.join("/dev/shm", name)
        try:
            pid = int(m.group(1))
            if os.path.getsize(path) != 0:
                continue
            os.kill(pid, 0)  # alive (perhaps between creating and sizing it): left alone
        except ProcessLookupError:
            try:
                os.unlink(path)
            except OSError:
                pass
        except (OSError, ValueError):
            continue


sweep_empty_omp_registrations()

# The default --format writes the Perfetto trace; tests that read the Chrome trace ask for it.
CHROME = "--format=chrome,summary,json"


def written_report():
    """A file for KOB_RUN_REPORT, outside the test's own folder: each process the library writes
    the files of appends "PID<TAB>FILE<TAB>..." to it (what kob run reads). Under --quiet nothing
    else says that the files were written, and how many times."""
    path = os.path.join(workdir(), "written")
    open(path, "w").close()
    return path


def written(path):
    """[(pid, [files])] from a written_report() file, in the order written."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            out.append((int(parts[0]), parts[1:]))
    return out


def wrote_line(line):
    """A "wrote" line without the next step it ends with: "... wrote A, B (next: ...)" -> "... wrote A, B"."""
    return re.sub(r" \(next: .*\)$", "", line)


def check(cond, what):
    """Records a failed expectation; the test fails at the end with every failure listed."""
    if not cond:
        failures.append(what)
    return cond


def expect_eq(actual, expected, what):
    return check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def finish():
    global _finished
    _finished = True
    if failures:
        for f in failures:
            print("FAIL:", f)
        _keep_workdirs("the test failed")
        print(f"0 passed, {len(failures)} failed")
        sys.exit(1)
    _remove_workdirs()
    print("all checks passed")
    sys.exit(0)


# In the sanitizer build (meson -Dsanitize=...) the library needs the sanitizer runtime loaded
# before anything else, and the programs it is loaded into are not instrumented: every program a
# test runs gets the runtime first in LD_PRELOAD, also when the test sets or drops LD_PRELOAD.
SANITIZER_PRELOAD = os.environ.get("KOB_SANITIZER_PRELOAD", "")
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


# AddressSanitizer keeps freed blocks resident in its quarantine (up to 256 MiB): where a test
# compares resident memory, freed blocks would look like growth. With this in the environment
# freed memory is reused at once (empty without the sanitizers).
NO_QUARANTINE = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0"} if SANITIZER_PRELOAD else {}


def program_env(env_extra=None, unset=()):
    """The environment a test program runs with: ours, minus `unset`, plus `env_extra`, and the
    sanitizer runtime first in LD_PRELOAD in the sanitizer build."""
    env = dict(os.environ)
    for k in unset:
        env.pop(k, None)
    env.setdefault("OMP_PROC_BIND", "false")
    env.update(env_extra or {})
    env.pop("KOB_SANITIZER_PRELOAD", None)
    if SANITIZER_PRELOAD:
        rest = [p for p in env.get("LD_PRELOAD", "").split(":") if p and p != SANITIZER_PRELOAD]
        env["LD_PRELOAD"] = ":".join([SANITIZER_PRELOAD] + rest)
    return env


def without_sanitizer_notes(lines):
    """stderr lines less the sanitizer runtime's own notes that are not findings (LSan in a forked
    child: "==PID==Running thread N was not suspended. False leaks are possible.")."""
    return [l for l in lines if not (l.startswith("==") and "False leaks are possible" in l)]


def check_no_sanitizer_report(stderr, program):
    """A sanitizer finding fails the test even where the exit code is not checked; it is printed at
    once, in case the test stops on a missing file before finish()."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    report = next((line for line in stderr.splitlines() if any(m in line for m in SANITIZER_REPORTS)), None)
    if not check(report is None, f"sanitizer report running {os.path.basename(program)}: {report}"):
        print(stderr[-8000:], flush=True)


def run(cmd, env_extra=None, cwd=None, unset=(), timeout=300):
    p = subprocess.run(cmd, env=program_env(env_extra, unset), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    check_no_sanitizer_report(p.stderr, cmd[0])
    return p.returncode, p.stdout, p.stderr


# Every folder workdir() made: removed when the test passes, kept (and named) when it fails or
# stops before finish(), so that its files can be looked at.
_workdirs = []
_finished = False


def until_settled(attempt, unsettled, attempts=3):
    """Runs attempt() until unsettled(result) says nothing (or attempts are spent) and returns the
    last result. For runs whose figures a machine kept busy by other work can move (a thread off
    the CPU for longer than the tool waits for it): unsettled names what was seen, printed with
    "run again"; the test's checks are then made on the last run, all of them."""
    for i in range(1, attempts + 1):
        result = attempt()
        why = unsettled(result)
        if not why or i == attempts:
            return result
        print(f"attempt {i}: {why} (a loaded machine?): run again")


def peak_rss_kib(runner, cmd, env_extra=None, what=""):
    """Runs cmd through the peak_rss runner (benchmarks/peak_rss.cpp): its peak resident set in KiB,
    or None after a failed check when it failed or printed no peak."""
    rc, _, err = run([os.path.abspath(runner)] + cmd, env_extra)
    lines = [l for l in err.splitlines() if l.startswith("peak_rss_kib ")]
    if not expect_eq((rc, len(lines)), (0, 1), f"{what}: exit status, peak printed ({err.strip()[-500:]})"):
        return None
    return int(lines[0].split()[1])


def workdir():
    d = tempfile.mkdtemp(prefix="kob-test-")
    _workdirs.append(d)
    return d


def _remove_workdirs():
    for d in _workdirs:
        shutil.rmtree(d, ignore_errors=True)
    _workdirs.clear()


def _keep_workdirs(why):
    kept = [d for d in _workdirs if os.path.isdir(d)]
    if kept:
        print(f"{why}: its files are kept in " + " ".join(kept), flush=True)
    _workdirs.clear()


@atexit.register
def _at_exit():
    if not _finished:
        _keep_workdirs("the test stopped before its end")


class MissingKey(KeyError):
    pass


# The keys the outputs' schemas make optional (present only where they apply): the only ones a
# test may read with a default (d.get(k, default)). Any other key read must be there.
OPTIONAL_KEYS = frozenset({
    # trace events: metadata events have no category, instants no duration, only flows an id
    "cat", "args", "id", "dur", "s", "bp",
    # event args present where they apply
    "kokkos_kernel", "kokkos_deep_copy", "kokkos_alloc", "cut", "nested", "acquired", "status", "source", "point",
    # otherData: only an MPI rank has them
    "rank", "mpi",
    # a finding about an OpenMP construct names it
    "location",
})


class Strict(dict):
    """A JSON object a test reads: every key it reads must be there. d[k], and d.get(k) for any key
    not in OPTIONAL_KEYS, fail on a key the object lacks, so no default can hide a key that was
    renamed or never written (a check of "nothing dropped" that read a misspelt key and took 0
    passed whatever happened)."""

    def __missing__(self, key):
        raise MissingKey(f"the key {key!r} is not in this object (it has: {', '.join(sorted(self))[:400]})")

    def get(self, key, default=None):
        if key in self:
            return dict.__getitem__(self, key)
        if key in OPTIONAL_KEYS:
            return default
        return self[key]


def _strict(pairs):
    d = Strict(pairs)
    # The self-test (test_strict_keys.py) plants a misspelt key: every test must then fail.
    plant = os.environ.get("KOB_CHECK_MISSPELL")
    if plant and plant in d:
        d[plant + "_misspelt"] = dict.pop(d, plant)
    return d


def json_load(f):
    """json.load for the files under test: objects are Strict."""
    return json.load(f, object_pairs_hook=_strict)


def json_loads(text):
    return json.loads(text, object_pairs_hook=_strict)


def load_json(path):
    with open(path) as f:
        return json_load(f)


# The raw type of a summary's device label (Kokkos 3.4.1 names View initialization kernels Serial;
# the summary shows those that ran on OpenMP "OpenMP (inferred)"), as count_tool reports it.
SPACE_TYPE = {"Serial": 0, "OpenMP (inferred)": 0, "OpenMP": 1}


def kokkos_counts(s):
    """What a summary.json counts of the Kokkos hooks, in count_tool's terms (count_tool.cpp):
    kernels per name, kind and space type, region pushes per name, fences, allocations (calls,
    bytes) and frees per space, deep copies (calls, bytes)."""
    regions = Counter()
    for r in s["regions"]:
        regions[r["name"]] += r["calls"]
    return {"kernels": sorted((k["name"], k["kind"], SPACE_TYPE.get(k["device"], -1), k["calls"]) for k in s["kernels"]),
            "regions": dict(regions),
            "fences": sum(f["calls"] for f in s["fences"]),
            "allocations": {m["space"]: [m["allocations"], m["bytes_allocated"]] for m in s["memory"] if m["allocations"]},
            "frees": {m["space"]: m["deallocations"] for m in s["memory"] if m["deallocations"]},
            "deep_copies": [sum(c["calls"] for c in s["deep_copies"]), sum(c["bytes"] for c in s["deep_copies"])]}


def count_tool_counts(c):
    """count_tool's COUNT_TOOL_OUT file in the terms of kokkos_counts."""
    return {"kernels": sorted((n, k, t, calls) for n, k, t, calls in c["kernels"]), "regions": c["regions"],
            "fences": c["fences"], "allocations": c["allocations"],
            "frees": {sp: v[0] for sp, v in c["deallocations"].items()}, "deep_copies": c["deep_copies"]}


def expect_kokkos_counts(summary, count, what):
    """Every count of kokkos_counts equal to count_tool's, and nothing dropped (its key read as it is)."""
    got, want = kokkos_counts(summary), count_tool_counts(count)
    for key in want:
        expect_eq(got[key], want[key], f"{what}: {key} = count_tool's")
    expect_eq(summary["dropped_events"], 0, f"{what}: nothing dropped")


def load_outputs(prefix):
    return load_json(prefix + ".trace.json"), load_json(prefix + ".summary.json")


def validate_trace(doc):
    """Schema checks every trace must pass: events well formed, args present, complete events
    nesting per track, every track named, flows paired."""
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "trace is an object with traceEvents")
    check("otherData" in doc, "trace has otherData")
    other = doc.get("otherData", {})
    for key in ("tool_version", "kokkos_interface_version", "openmp_runtime", "host", "pid", "start_time", "dropped_events"):
        check(key in other, f"otherData has {key}")
    evs = doc["traceEvents"]
    named = set()
    tracks = defaultdict(list)
    for e in evs:
        if e.get("ph") == "M":
            if e.get("name") == "thread_name":
                named.add((e["pid"], e["tid"]))
            continue
        if not check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"ts is a non-negative number: {e}"):
            continue
        cat = e.get("cat")
        if cat in REQUIRED_ARGS and e.get("ph") in ("X", "i", "C", "b"):
            missing = [a for a in REQUIRED_ARGS[cat] if a not in (e.get("args") or {})]
            check(not missing, f"{cat} {e.get('name')!r} lacks args {missing}")
        if e.get("ph") == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"X event has dur >= 0: {e}")
            tracks[(e["pid"], e["tid"])].append(e)
    for key, lst in tracks.items():
        check(key in named, f"track {key} has a thread_name")
        lst.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in lst:
            s, t = e["ts"], e["ts"] + e["dur"]
            while stack and stack[-1][0] <= s + 1e-9:
                stack.pop()
            if stack:
                check(t <= stack[-1][0] + 1e-6,
                      f"partial overlap on track {key}: {e.get('cat')} {e.get('name')!r} ends after {stack[-1][1]!r}")
            stack.append((t, e.get("name")))
    starts = Counter((e.get("cat"), e.get("id")) for e in evs if e.get("ph") == "s")
    ends = Counter((e.get("cat"), e.get("id")) for e in evs if e.get("ph") == "f")
    check(starts == ends, f"flow starts and ends pair up ({sum(starts.values())} vs {sum(ends.values())})")


def check_pftrace_rules(path):
    """Decodes a .pftrace with the tests' own decoder and records every rule of Perfetto's docs it
    breaks (pftrace_decode.rule_problems: interned ids, incremental-state flags, tracks described,
    slices nested). Returns the decoded trace, for the test's own comparisons."""
    import pftrace_decode  # beside this file; only the trace tests need it
    trace = pftrace_decode.Trace(path)
    problems = pftrace_decode.rule_problems(trace)
    check(not problems, f"{path}: {len(problems)} broken rules of the Perfetto format, the first: {problems[:5]}")
    return trace


def events(doc, cat, ph=None):
    return [e for e in doc["traceEvents"] if e.get("cat") == cat and (ph is None or e.get("ph") == ph)]


def construct(e):
    """An event's construct: its name without the source location that OpenMP slices outside Kokkos
    kernels get appended ("parallel main a.c:12" -> "parallel"). Two-word names are kept whole."""
    name = e["name"]
    for whole in ("task create", "implicit task", "initial task"):
        if name == whole or name.startswith(whole + " "):
            return whole
    return name.split(" ", 1)[0]


def inside(inner, outer):
    return outer["ts"] <= inner["ts"] + 1e-9 and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-6
