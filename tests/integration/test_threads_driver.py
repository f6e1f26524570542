"""The library under threads_driver (a std::thread program that plays Kokkos and an OpenMP runtime,
every synchronisation of it visible to ThreadSanitizer): recorder, writer thread, signal watcher
and fork handlers meet the team's callbacks and a second Kokkos thread. In the build-tsan build
(scripts/test.sh) this is where a data race in our code shows; any sanitizer report fails the test.
In every build it checks the counts: nothing lost, every OpenMP event linked to its kernel.
  record: exit 0; KERNELS kernels, as many parallel regions (each naming its kernel), KERNELS*TEAM
          implicit tasks, loops, explicit tasks, implicit barriers and critical sections (wait and
          hold), the second thread's regions, fences and deep copies one for one; `kob convert` of
          the raw trace in windows of one span (the writers' threads) gives the same events.
  capped: --memory-limit=1 (MiB) and a team of 8: the threads without room record nothing, the
          run ends as without the tool, the main thread's kernels all there.
  signal: SIGTERM from a thread mid-run ends the process as without the tool; the files written
          by the watcher hold at least the kernels before the signal, each whole.
  fork:   the child's own files hold its 3 kernels only; the parent's all KERNELS."""
import argparse
import glob
import os
import signal
import subprocess
from collections import Counter

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--team", type=int, default=4)
ap.add_argument("--kernels", type=int, default=300)
a = ap.parse_args()
prog, lib, kob = os.path.abspath(a.program), os.path.abspath(a.lib), os.path.abspath(a.kob)
T, N = a.team, a.kernels
wd = kc.workdir()


def run(mode, prefix, team=T, options=""):
    extra = {"KOB_ARGS": f"--output={prefix} --quiet --format=chrome,summary,json,perfetto {options}"}
    if mode == "fork" and "TSAN_OPTIONS" in os.environ:
        # The child starts its own writer thread, which ThreadSanitizer refuses after a
        # multi-threaded fork unless told to go on (it then watches the child as any process).
        extra["TSAN_OPTIONS"] = os.environ["TSAN_OPTIONS"] + ":die_after_fork=0"
    env = kc.program_env(extra)
    p = subprocess.run([prog, lib, mode, str(team), str(N)], env=env, cwd=wd, capture_output=True, text=True, timeout=240)
    kc.check_no_sanitizer_report(p.stderr, f"threads_driver {mode}")
    return p.returncode, p.stdout, p.stderr


def counts(trace):
    return Counter((e["cat"], e["name"]) for e in trace["traceEvents"] if e.get("ph") == "X")


def check_team(trace, kernels, name, what):
    """Every kernel of the team whole and linked: its parallel region, TEAM implicit tasks."""
    ks = [e for e in kc.events(trace, "kokkos.kernel") if e["name"] == name]
    kc.expect_eq(len(ks), kernels, f"{what}: {name} kernels")
    ids = {e["args"]["id"] for e in ks}
    par = kc.events(trace, "omp.parallel")
    kc.expect_eq(sorted(e["args"].get("kokkos_kernel") for e in par), sorted(ids), f"{what}: one parallel region per kernel, linked")
    team = Counter(e["args"].get("kokkos_kernel") for e in kc.events(trace, "omp.implicit_task")
                   if e["args"].get("kokkos_kernel") in ids)
    kc.expect_eq(set(team.values()), {T} if kernels else set(), f"{what}: {T} implicit tasks per kernel")
    kc.check(not any(e["args"].get("cut") for e in ks + par), f"{what}: no kernel or region cut")
    return ks


# ---- record (the files at the end made by 3 threads: --jobs) -------------------------------------
prefix = os.path.join(wd, "record")
rc, out, err = run("record", prefix, options="--jobs=3")
kc.expect_eq(rc, 0, f"record: exit status ({err[-2000:]})")
kc.expect_eq(out.strip(), f"kernels {N}", "record: the program's own output")
trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kc.expect_eq(trace["otherData"].get("dropped_events"), 0, "record: no event dropped")
check_team(trace, N, "team_kernel", "record")
c = counts(trace)
for key, n in {("omp.work", "loop"): N * T, ("omp.sync", "barrier_implicit_parallel"): N * T,
               ("omp.task", "task"): N * T}.items():
    kc.expect_eq(c[key], n, f"record: {key}")
mutex = Counter(e["args"].get("phase") for e in kc.events(trace, "omp.mutex"))
kc.expect_eq((mutex["wait"], mutex["hold"]), (N * T, N * T), "record: critical sections, wait and hold")
regions = c[("kokkos.region", "host_thread_region")]
kc.check(regions > 0, "record: the second Kokkos thread ran")
kc.expect_eq((c[("kokkos.fence", "host_thread_fence")], c[("kokkos.deep_copy", "dst <- src")]), (regions, regions),
             "record: the second thread's fences and deep copies, one per region")
kc.check_pftrace_rules(prefix + ".pftrace")

# kob convert of the raw trace, a window of one span at a time, the events made by 3 threads (the
# writers' threads and the shards'): the same events.
conv = os.path.join(wd, "converted")
p = subprocess.run([kob, "convert", prefix + ".kob", f"--output={conv}", "--to=chrome,summary,json,perfetto",
                    "--trace-window=1", "-j", "3", "--quiet"], env=kc.program_env(), capture_output=True, text=True, timeout=240)
kc.check_no_sanitizer_report(p.stderr, "kob convert")
kc.expect_eq(p.returncode, 0, f"kob convert --trace-window=1 ({p.stderr[-2000:]})")
doc, _ = kc.load_outputs(conv)
kc.validate_trace(doc)
kc.expect_eq(counts(doc), c, "kob convert --trace-window=1: the library's events")
kc.check_pftrace_rules(conv + ".pftrace")

# ---- a memory cap that leaves some threads no room: they drop, the others go on ----------------
prefix = os.path.join(wd, "capped")
rc, out, err = run("record", prefix, team=8, options="--memory-limit=1")
kc.expect_eq(rc, 0, f"capped: exit status ({err[-2000:]})")
kc.check("--memory-limit leaves no room" in err, f"capped: a thread found no room ({err[-2000:]})")
trace, _ = kc.load_outputs(prefix)
kc.validate_trace(trace)
kc.expect_eq(len([e for e in kc.events(trace, "kokkos.kernel") if e["name"] == "team_kernel"]), N,
             "capped: the main thread's kernels, all (it took its room first)")

# ---- signal --------------------------------------------------------------------------------------
prefix = os.path.join(wd, "signal")
rc, out, err = run("signal", prefix)
kc.expect_eq(rc, -signal.SIGTERM, f"signal: ended by SIGTERM as without the tool ({err[-2000:]})")
trace, _ = kc.load_outputs(prefix)
kc.validate_trace(trace)
ks = [e for e in kc.events(trace, "kokkos.kernel") if e["name"] == "team_kernel" and not e["args"].get("cut")]
kc.check(len(ks) >= N // 2, f"signal: the {N // 2} kernels before the signal are in the files ({len(ks)})")

# ---- fork ----------------------------------------------------------------------------------------
prefix = os.path.join(wd, "fork")
rc, out, err = run("fork", prefix)
kc.expect_eq(rc, 0, f"fork: exit status ({err[-2000:]})")
kc.expect_eq(out.split(), ["kernels", str(N), "child", "0"], "fork: the program's output, its child exited 0")
trace, _ = kc.load_outputs(prefix)
kc.validate_trace(trace)
check_team(trace, N, "team_kernel", "fork parent")
kc.expect_eq([e for e in kc.events(trace, "kokkos.kernel") if e["name"] == "child_kernel"], [], "fork parent: no child kernel")
children = [f for f in glob.glob(prefix + "-*.trace.json")]
kc.expect_eq(len(children), 1, f"fork: one child's files ({children})")
if children:
    child, _ = kc.load_outputs(children[0][:-len(".trace.json")])
    kc.validate_trace(child)
    names = Counter(e["name"] for e in kc.events(child, "kokkos.kernel"))
    kc.expect_eq(names, Counter({"child_kernel": 3}), "fork child: its own 3 kernels only")
kc.finish()
