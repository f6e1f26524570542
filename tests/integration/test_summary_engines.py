"""The summary made one program thread at a time (the per-thread engine, issue 42) is the summary
the timeline builder makes: records a program's raw trace once and converts it to summary.json
and summary.txt twice, with KOB_ENGINE=builder and with KOB_ENGINE=per-thread; the files must be
byte for byte the same. --engine says whether the per-thread engine must have covered the run
(yes: it may not decline, said on stderr) or must have declined it (no: a run it does not cover
yet, which the builder summarizes). --epoch-chunks converts a second time with epochs of that
many chunks (the joins carried over epoch ends), which must give the same files again. --diff
records the program a second time and compares `kob diff --json` of the two runs made by each
engine (every call's time per kernel, region and construct, through the noise model): the
reports must be the same too."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--kind", choices=["kokkos", "openmp"], required=True)
ap.add_argument("--threads", type=int, default=4)
ap.add_argument("--case", action="append", default=[], help="an argument of the program")
ap.add_argument("--engine", choices=["yes", "no"], required=True)
ap.add_argument("--epoch-chunks", type=int, default=0)
ap.add_argument("--tool-args", default="", help="more tool options for the recording")
ap.add_argument("--exit-signal", type=int, default=0,
                help="the program ends by this signal (a run cut short: no clean end in its raw trace)")
ap.add_argument("--cut-spans", type=int, default=None,
                help="a run cut short: the spans still open at its end, cut at their thread's last event")
ap.add_argument("--cut-omp", type=int, default=None,
                help="a run cut short inside a parallel region: its implicit tasks still open (one a thread), named cut")
ap.add_argument("--unended", type=int, default=None,
                help="a clean end with this many Kokkos spans still open, shown until the end of the run")
ap.add_argument("--diff", action="store_true", help="also compare kob diff's reports of two runs")
ap.add_argument("--env", action="append", default=[], help="VAR=VALUE for the program (OMP_CANCELLATION=true)")
ap.add_argument("--tasks", default=None,
                help="the explicit tasks' figures the summary must hold: created,stretches,completed,cancelled,discarded")
ap.add_argument("--damage", type=int, default=0,
                help="also N damaged copies of the raw trace (a 4 KiB block zeroed at N offsets spread over the "
                     "file, and one with garbage appended): each made the same by both engines, or declined")
ap.add_argument("--device-records", default=None,
                help="the program's own report (a path in the test's folder, as the device tracing test runtime "
                     "writes it): each device's records in the summary must be the ones it says it wrote")
ap.add_argument("--hidden-helpers", action="store_true",
                help="the run has libomp's hidden-helper team (target nowait): the summary must name its threads")
ap.add_argument("--kob-races-only", action="store_true",
                help="under ThreadSanitizer: the program's races (Kokkos', libomp's uninstrumented) are not this "
                     "test's; kob's threads are")
a = ap.parse_args()
lib = os.path.abspath(a.lib)

wd = kc.workdir()
raw = os.path.join(wd, "run")
env = {"OMP_NUM_THREADS": str(a.threads), "OMP_TOOL_LIBRARIES": lib,
       "KOB_ARGS": f"--output={raw} --quiet --format=none {a.tool_args}".strip()}
env.update(dict(v.split("=", 1) for v in a.env))
if a.kind == "kokkos":
    env["KOKKOS_PROFILE_LIBRARY"] = lib
    env["KOKKOS_TOOLS_LIBS"] = lib
if a.kob_races_only:
    env["TSAN_OPTIONS"] = os.environ.get("TSAN_OPTIONS", "") + ":report_bugs=0"


def record():
    rc, _, err = kc.run([os.path.abspath(a.program)] + a.case, env, cwd=wd)
    # A run cut short has a clock calibration point only when the writer thread wrote one (every
    # second) before the end: else each conversion takes this machine's clock rate at its own
    # moment, and the two engines' files differ by a nanosecond here and there.
    _, _, said = kc.run([a.kob, "summary", raw + ".kob"]) if a.exit_signal else (0, "", "")
    return rc, err, "no clock calibration point" in said


def no_calibration(result):
    return "the raw trace has no clock calibration point" if result[2] else ""


rc, err, uncalibrated = kc.until_settled(record, no_calibration)
kc.expect_eq(rc, -a.exit_signal, f"program exit code ({err[-300:]})")
kc.check(not uncalibrated, "the raw trace has a clock calibration point (the two conversions take the same clock line)")
if a.diff:
    rc, _, err = kc.run([os.path.abspath(a.program)] + a.case, {**env, "KOB_ARGS": env["KOB_ARGS"].replace(raw, raw + "2")}, cwd=wd)
    kc.expect_eq(rc, 0, f"program exit code, second run ({err[-300:]})")


def convert(name, engine, extra_env=None, jobs=1, src=None):
    prefix = os.path.join(wd, name)
    # More jobs than program threads or cores: the per-thread engine folds threads side by side.
    rc, _, err = kc.run([a.kob, "convert", src or raw + ".kob", "--to=json,summary", "-j", str(jobs), f"--output={prefix}", "--quiet"],
                        {"KOB_ENGINE": engine, **(extra_env or {})})
    kc.expect_eq(rc, 0, f"kob convert ({engine}): exit status ({err.strip()})")
    declined = [l for l in err.splitlines() if "the per-thread engine declined" in l]
    files = {}
    for ext in (".summary.json", ".summary.txt"):
        with open(prefix + ext, "rb") as f:
            files[ext] = f.read()
    return files, declined


ref, _ = convert("builder", "builder")
new, declined = convert("per_thread", "per-thread", jobs=3)
if a.engine == "yes":
    kc.expect_eq(declined, [], "the per-thread engine covered the run")
else:
    kc.check(len(declined) == 1, f"the per-thread engine declined the run (stderr says why): {declined}")
for ext in ref:
    if not kc.check(new[ext] == ref[ext], f"{ext}: the per-thread engine's file is the builder's"):
        old_lines, new_lines = ref[ext].decode().splitlines(), new[ext].decode().splitlines()
        for i, (o, n) in enumerate(zip(old_lines, new_lines)):
            if o != n:
                print(f"first difference, line {i + 1}:\n  builder:    {o[:300]}\n  per-thread: {n[:300]}")
                break
# The summary's own figures say what the comparison covered (a run with no events proves nothing).
with open(os.path.join(wd, "builder.summary.json")) as f:
    s = kc.json_load(f)
kc.check(s["openmp"]["records"] > 0 or len(s["kernels"]) > 0 or s["target"]["records"] > 0,
         "the run has OpenMP host or target records or Kokkos kernels to compare")
if a.hidden_helpers:
    kc.check(s["openmp"]["hidden_helper_threads"] > 1, "the summary names the hidden-helper team's threads (its main thread and workers): "
             f"{s['openmp']['hidden_helper_threads']}")
if a.device_records is not None:
    with open(os.path.join(wd, a.device_records)) as f:
        rt = kc.json_load(f)
    said = {d["device"]: d["device_records"] for d in s["target"]["devices"]}
    wrote = {d["num"]: len(d["expected"]) for d in rt["devices"] if d["expected"]}
    kc.check(len(wrote) > 0, "the runtime wrote device tracing records")
    kc.expect_eq(sorted(n for n in wrote if n not in said), [], "every device the runtime wrote records for is in the summary")
    kc.expect_eq({n: said[n] for n in wrote if n in said}, wrote, "device tracing records in the summary, by device, as the runtime wrote them")
if a.cut_spans is not None:
    kc.expect_eq((s["cut_short"], s["cut_spans"]), (True, a.cut_spans), "a run cut short, and its spans cut")
if a.cut_omp is not None:
    def cut_count(what):
        lines = [p for p in s["problems"] if p.startswith(what + " never ended: cut at its thread's last event")]
        return int(lines[0].rsplit("(", 1)[1].split()[0]) if lines else 0
    kc.expect_eq((cut_count("an OpenMP implicit task"), cut_count("an OpenMP parallel region")), (a.cut_omp, 1),
                 "the implicit tasks and the parallel region open at the cut, named cut")
if a.tasks is not None:
    t = s["openmp"]["tasks"]
    kc.expect_eq([t["created"], t["stretches"], t["completed"], t["cancelled"], t["discarded"]], [int(x) for x in a.tasks.split(",")],
                 "explicit tasks: created, stretches, completed, cancelled, discarded")
if a.unended is not None:
    shown = sum(int(p.rsplit("(", 1)[1].split()[0]) for p in s["problems"] if "shown until the end of the run" in p)
    kc.expect_eq((s["cut_short"], shown), (False, a.unended), "a clean end, and its spans never ended (problem lines)")
if "--include" in a.tool_args or "--exclude" in a.tool_args:
    kc.check(s["filtered_kernel_calls"] + s["filtered_region_entries"] > 0, "--include/--exclude left some kernels or regions out")
if a.diff:
    reports = {}
    for engine in ("builder", "per-thread"):
        rc, out, err = kc.run([a.kob, "diff", raw + ".kob", "--vs", raw + "2.kob", "--json"], {"KOB_ENGINE": engine})
        kc.expect_eq(rc, 0, f"kob diff ({engine}): exit status ({err.strip()[-300:]})")
        reports[engine] = out
        if engine == "per-thread":
            kc.expect_eq([l for l in err.splitlines() if "the per-thread engine declined" in l], [],
                         "the per-thread engine covered both runs of kob diff")
    kc.check(reports["per-thread"] == reports["builder"], "kob diff: the per-thread engine's report is the builder's")
    # What the comparison covered: rows whose calls' times went through the noise model.
    d = kc.json_loads(reports["builder"])
    judged = [r["name"] for sec in ("kernels", "regions", "constructs") for r in d[sec] if r["judged"]]
    kc.check(len(judged) > 0, f"kob diff judged rows by their calls' times: {judged[:5]}")
if a.epoch_chunks:
    small, declined = convert("epochs", "per-thread", {"KOB_EPOCH_CHUNKS": str(a.epoch_chunks)}, jobs=2)
    if a.engine == "yes":
        kc.expect_eq(declined, [], f"the per-thread engine covered the run in epochs of {a.epoch_chunks} chunks")
    for ext in ref:
        kc.check(small[ext] == ref[ext], f"{ext}: the per-thread engine's file in epochs of {a.epoch_chunks} chunks is the builder's")
if a.damage:
    # Damaged files (blocks lost, a write cut short) go to the per-thread engine too: the same files
    # as the builder's, or declined where the damage leaves what the engine does not follow (ends
    # whose begins were lost and the like). A zeroed block ends what the reader takes of the file
    # (the rest is a write cut short), and with it the clock calibration at the end: both
    # conversions take one clock rate (KOB_TEST_TICKS_PER_NS), not this machine's at two moments.
    with open(raw + ".kob", "rb") as f:
        data = f.read()
    variants = [("garbage appended", data + bytes(range(97)) * 3)]
    blocks = len(data) // 4096
    for i in range(a.damage):
        b = 1 + (blocks - 2) * (i + 1) // (a.damage + 1)  # past the file header, before the last block
        variants.append((f"block {b} zeroed", data[:b * 4096] + bytes(4096) + data[(b + 1) * 4096:]))
    covered = []
    for label, bytes_ in variants:
        path = os.path.join(wd, "damaged.kob")
        with open(path, "wb") as f:
            f.write(bytes_)
        rate = {"KOB_TEST_TICKS_PER_NS": "2.5"}
        ref, _ = convert("damaged_builder", "builder", rate, src=path)
        new, declined = convert("damaged_per_thread", "per-thread", rate, src=path)
        if declined:
            print(f"{label}: declined ({declined[0].split('declined: ')[-1]})")
            kc.check(label != "garbage appended", "a file with garbage appended (nothing lost) is covered")
            continue
        covered.append(label)
        for ext in ref:
            kc.check(new[ext] == ref[ext], f"{label}: {ext}: the per-thread engine's file is the builder's")
    print(f"damaged copies covered by the per-thread engine: {len(covered)} of {len(variants)}")
    kc.check(len(covered) >= 2, "the per-thread engine covered the garbage-appended copy and a copy with a block lost")
kc.finish()
