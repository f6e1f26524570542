"""kob convert on raw traces written by hand (make_raw_trace, after docs/raw-format.md): the files
it writes and their exact content, --to and --output, a run cut short (spans cut at their thread's
last event), a lost stretch, the progress line on a terminal only, and one clear line and the
documented exit status for each bad input."""
import argparse
import json
import os
import pty
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kob", required=True)
ap.add_argument("--maker", required=True)
args = ap.parse_args()

N = 40
work = kc.workdir()


def make(name, mode, n=N):
    path = os.path.join(work, name + ".kob")
    rc, _, err = kc.run([args.maker, path, str(n), mode])
    kc.expect_eq(rc, 0, f"make_raw_trace {mode} exit status ({err})")
    return path


def convert(*cmd_args):
    return kc.run([args.kob, "convert", *cmd_args])


def stderr_lines(err):
    return [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip()]


# A clean run: every file, from PREFIX.kob, beside it.
clean = make("clean", "clean")
prefix = clean[:-4]
rc, out, err = convert(clean)
kc.expect_eq(rc, 0, "convert clean: exit status")
kc.expect_eq(stderr_lines(err), [f"kob: wrote {prefix}.trace.json, {prefix}.summary.txt, {prefix}.summary.json"],
             "convert clean: stderr is the one line naming the files")
kc.check("\r" not in err, "no progress line when stderr is not a terminal")
trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
kernels = kc.events(trace, "kokkos.kernel", "X")
kc.expect_eq(len(kernels), N, "kernels in the trace")
kc.expect_eq({k["name"] for k in kernels}, {"raw_kernel"}, "kernel names come from the file's NAME entries")
kc.expect_eq(sorted(k["args"]["id"] for k in kernels), list(range(1, N + 1)), "kernel ids")
# 6000 ns from begin to end, through 3 ticks per ns: the file's calibration, not this machine's.
kc.expect_eq({round(k["dur"], 3) for k in kernels}, {6.0}, "kernel durations (us) through the file's clock line")
kc.expect_eq(round(kernels[1]["ts"] - kernels[0]["ts"], 3), 10.0, "kernel spacing (us)")
kc.expect_eq(len(kc.events(trace, "omp.parallel", "X")), N, "parallel regions")
kc.expect_eq(len(kc.events(trace, "omp.implicit_task", "X")), 2 * N, "implicit tasks")
regions = kc.events(trace, "kokkos.region", "X")
kc.expect_eq([r["name"] for r in regions], ["raw_region"], "the region")
kc.check(all("cut" not in e.get("args", {}) for e in trace["traceEvents"]), "nothing cut in a clean run")
other = trace["otherData"]
kc.expect_eq((other["pid"], other["tool_version"], other["host"], other["openmp_runtime"], other["start_time"], other["clock"]),
             (31337, "9.9.9", "rawhost", "fake omp", "2026-01-02T03:04:05Z", "tsc"), "otherData from the KV entries")
kc.expect_eq(other["metadata"], {"meta_key": "meta_value"}, "otherData metadata")
kc.expect_eq(other["events"], "kokkos,omp-parallel", "otherData events from the recorded options")
kc.expect_eq(other["ompt"], {"initial_device_num": "0"}, "otherData section from other:ompt")
pname = [e for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name"]
kc.expect_eq(pname[0]["args"]["name"] if pname else None, "raw_program", "process name")
tnames = sorted(e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name")
kc.expect_eq(tnames, ["omp thread 0", "omp thread 1"], "threads from the THREAD entries")
kc.expect_eq([(k["name"], k["calls"], k["total_ns"]) for k in summary["kernels"]], [("raw_kernel", N, N * 6000)], "summary kernels")
kc.expect_eq((summary["cut_short"], summary["cut_spans"], summary["dropped_events"]), (False, 0, 0), "summary: clean")
# From the first event to the region's end; the record a thread put in its ring slot after END is not read.
kc.expect_eq(summary["run_time_ns"], 2000 + N * 10000 - 1000, "run time")
kc.expect_eq(summary["otherData"], other, "summary otherData equals the trace's")
with open(prefix + ".summary.txt") as f:
    kc.check("raw_program (pid 31337)" in f.read(), "summary.txt titled with the program and pid")

# --to and --output; RUN given as its prefix.
out_prefix = os.path.join(work, "sub", "dir", "conv")
rc, _, err = convert(prefix, "--to=summary", f"--output={out_prefix}", "--quiet")
kc.expect_eq(rc, 0, "convert --to=summary --output: exit status")
kc.expect_eq(stderr_lines(err), [], "--quiet: nothing on stderr")
kc.expect_eq(sorted(os.listdir(os.path.dirname(out_prefix))), ["conv.summary.txt"], "--to=summary writes only the text summary")

# A run cut short: no END, spans still open cut at their own thread's last event, a cut tail.
crash = make("crash", "crash")
rc, _, err = convert(crash)
kc.expect_eq(rc, 0, "convert crash: exit status")
lines = stderr_lines(err)
kc.check(any("the last 248 bytes are a write cut short; ignored" in l for l in lines), f"cut tail named: {lines}")
kc.check(any("did not end cleanly; spans still open at its end are cut" in l for l in lines), f"cut run named: {lines}")
trace, summary = kc.load_outputs(crash[:-4])
kc.validate_trace(trace)
cut = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("args", {}).get("cut") is True]
kc.expect_eq(sorted(e["cat"] for e in cut),
             ["kokkos.kernel", "kokkos.region", "omp.implicit_task", "omp.implicit_task", "omp.parallel"], "cut spans")
last_kernel = [e for e in kc.events(trace, "kokkos.kernel", "X") if e["args"]["id"] == N]
kc.expect_eq(len(last_kernel), 1, "the open kernel is shown")
if last_kernel:
    kc.expect_eq(round(last_kernel[0]["dur"], 3), 1.1, "the open kernel ends at its thread's last event (us)")
    kc.expect_eq(last_kernel[0]["args"].get("cut"), True, "the open kernel is marked cut")
worker_tasks = [e for e in cut if e["cat"] == "omp.implicit_task" and e["args"]["thread_num"] == 1]
kc.expect_eq([round(e["dur"], 3) for e in worker_tasks], [0.0], "the worker's open task ends at its own last event")
kc.expect_eq((summary["cut_short"], summary["cut_spans"]), (True, 5), "summary: cut short, 5 spans cut")
kc.expect_eq(len(summary["kernels"]) and summary["kernels"][0]["calls"], N, "summary counts the cut kernel")
with open(crash[:-4] + ".summary.txt") as f:
    kc.check("cut short: the run ended without a clean exit; 5 spans still open" in f.read(), "summary.txt names the cut")

# A lost stretch: counted and named.
lost = make("lost", "lost")
rc, _, err = convert(lost, "--to=json")
kc.expect_eq(rc, 0, "convert lost: exit status")
kc.check(any("500 events lost in 1 stretches (first: thread 1" in l for l in stderr_lines(err)), f"drop line: {err}")
with open(lost[:-4] + ".summary.json") as f:
    summary = kc.json_load(f)
kc.expect_eq(summary["dropped_events"], 500, "lost events counted")
kc.expect_eq([(l["track"], l["os_tid"], l["from_ns"], l["to_ns"], l["events"]) for l in summary["coverage"]["lost"]],
             [(1, 9001, 4000, 6000, 500)], "the lost stretch, from the first event")

# A thread that copied its own full slots (no core was free for the writer thread): each copy a
# 'tool: flush' span inside the implicit task it interrupted, counted per thread in the summary.
flushed = make("flushed", "flushed", n=1000)
rc, _, err = convert(flushed, "--to=chrome,summary,json")
kc.expect_eq(rc, 0, "convert flushed: exit status")
kc.expect_eq(stderr_lines(err), [f"kob: wrote {flushed[:-4]}.trace.json, {flushed[:-4]}.summary.txt, {flushed[:-4]}.summary.json"],
             "convert flushed: nothing to warn about")
trace, summary = kc.load_outputs(flushed[:-4])
kc.validate_trace(trace)
kc.expect_eq([(e["name"], e["tid"], round(e["ts"], 3), round(e["dur"], 3), e["args"]["records"]) for e in kc.events(trace, "tool", "X")],
             [("tool: flush", 9001, 4992.899, 2.0, 1000), ("tool: flush", 9001, 9992.899, 2.0, 1000)],
             "the two flushes of thread 1, where and how long")
kc.expect_eq(summary["tool"], {"flushes": 2, "flush_ns": 4000,
                               "threads": [{"track": 1, "os_tid": 9001, "flushes": 2, "flush_ns": 4000}]},
             "summary: the flushes per thread")
kc.expect_eq((summary["dropped_events"], summary["kernels"][0]["calls"]), (0, 1000), "a flush loses nothing")
with open(flushed[:-4] + ".summary.txt") as f:
    kc.check("tool flushes: 2 on 1" in f.read(), "summary.txt names the flushes")

# The progress line: on a terminal only (pty), carriage-return updates, cleared at the end.
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(kc.program_env({"KOB_PROGRESS_DELAY_MS": "0"}))
    # json: something to convert (with none nothing is read: only the raw trace is the output)
    os.execv(args.kob, [args.kob, "convert", clean, "--to=json", "--quiet"])
chunks = []
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    chunks.append(data)
_, status = os.waitpid(pid, 0)
tty_out = b"".join(chunks).decode("utf-8", "replace")
kc.expect_eq(os.waitstatus_to_exitcode(status), 0, "convert on a terminal: exit status")
kc.check("\rkob: converting " + clean + ": " in tty_out and "events)" in tty_out, f"progress line on a terminal: {tty_out!r}")

# Bad inputs: one line each, exit status 1 (a RUN) or 2 (usage).
notraw = os.path.join(work, "notraw.kob")
with open(notraw, "wb") as f:
    f.write(b"hello" * 2000)
for cmd, status, part in (
    ([os.path.join(work, "missing")], 1, "cannot open " + os.path.join(work, "missing.kob") + ": No such file or directory"),
    ([notraw], 1, "is not a kokkos-ompt-bridge raw trace (no KOBRAW magic)"),
    ([clean, "--to=pdf"], 2, "--to: "),
    ([], 2, "convert needs at least one RUN"),
    ([clean, "--frobnicate"], 2, "not expected: --frobnicate"),
    ([clean, crash, "--output=x"], 2, "--output takes one RUN"),
    ([clean, "--trace-window=0"], 2, "--trace-window takes a number of spans (1 or more), not '0'"),
    ([clean, "--trace-window=12k"], 2, "--trace-window takes a number of spans (1 or more), not '12k'"),
    ([clean, "--trace-window=-3"], 2, "--trace-window takes a number of spans (1 or more), not '-3'"),
    ([clean, "-j", "0"], 2, "-j/--jobs takes a number of threads from 1 to 16, not '0'"),
    ([clean, "--jobs=17"], 2, "-j/--jobs takes a number of threads from 1 to 16, not '17'"),
    ([clean, "--jobs=two"], 2, "-j/--jobs takes a number of threads from 1 to 16, not 'two'"),
):
    rc, _, err = convert(*cmd)
    lines = stderr_lines(err)
    kc.expect_eq(rc, status, f"kob convert {cmd}: exit status")
    kc.check(len(lines) == 1 and lines[0].startswith("kob: ") and part in lines[0], f"kob convert {cmd}: one line with {part!r}: {lines}")
# One bad RUN among good ones: the good one is still converted, status 1.
os.remove(prefix + ".trace.json")
rc, _, err = convert(os.path.join(work, "missing"), clean, "--quiet")
kc.expect_eq(rc, 1, "a bad RUN among good ones: exit status 1")
kc.check(os.path.exists(prefix + ".trace.json"), "the good RUN is still converted")
rc, out, _ = kc.run([args.kob, "--help"])
kc.check(rc == 0 and "convert RUN..." in out, "kob --help")
rc, _, err = kc.run([args.kob, "frob"])
kc.check(rc == 2 and "unknown command 'frob'" in err, "unknown command: exit status 2")

kc.finish()
