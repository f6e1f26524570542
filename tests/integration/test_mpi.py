"""Four MPI ranks (OpenMPI's mpirun, loopback and shared memory only) given one --output: each
rank writes a file set of its own, valid and holding its own events (rank r opens r + 1 parallel
regions) and its rank in otherData; without a placeholder that tells ranks apart, -r<rank> is
added and each rank says so in one line. With kob: `mpirun -np 4 kob run`, and `kob run --mpi` (the PMPI
layer): each rank's clock offsets to rank 0, one rank's clock shifted by 5 ms for the test; the MPI_Allreduce as a span and in the summary. Skipped
only when mpirun is absent."""
import argparse
import glob
import json
import os
import socket
import sys

import kob_check as kc
import mpi_launch

ap = argparse.ArgumentParser()
ap.add_argument("--program")
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", help="kob: also `mpirun -np 4 kob run -- PROGRAM`")
mpi_launch.add_family_argument(ap)
a = ap.parse_args()
lib = os.path.abspath(a.lib)
NP = 4
TIMEOUT = 180
EXE = os.path.basename(a.program or "mpi_omp")
RANK_VAR = mpi_launch.RANK_VARIABLE[a.family]

mpirun = mpi_launch.mpirun_for(a.family)
if mpirun is None:
    print("SKIP: mpirun is not installed (scripts/setup.sh installs OpenMPI)")
    sys.exit(77)
if not a.program:
    kc.check(False, "mpirun is there but the MPI test program was not built: install OpenMPI's development files "
                    "(libopenmpi-dev, scripts/setup.sh) and reconfigure")
    kc.finish()
prog = os.path.abspath(a.program)
host = socket.gethostname()


def mpirun_run(env_extra, cwd, wrapper=()):
    return mpi_launch.run(mpirun, [(NP, env_extra, list(wrapper) + [prog])], cwd, TIMEOUT)


base_rc, base_out, base_err = mpirun_run({}, kc.workdir())
kc.expect_eq(base_rc, 0, f"mpirun runs the program without the tool ({base_err[-300:]!r})")
kc.expect_eq(base_out, "ranks 4 total 40\n", "the program's output without the tool")

# --output value -> expected prefix for (rank, pid), and whether each rank prints the naming note.
CASES = [
    ("run", lambda r, pid: f"run-r{r}", True),
    ("run-%r", lambda r, pid: f"run-{r}", False),
    ("run-%h-%p", lambda r, pid: f"run-{host}-{pid}", False),
    (f"run-%q{{{RANK_VAR}}}", lambda r, pid: f"run-{r}", False),
    ("sub/", lambda r, pid: f"sub/kob-{EXE}-{pid}-r{r}", False),
    (None, lambda r, pid: f"kob-{EXE}-{pid}-r{r}", False),
]
for output, name, note in CASES:
    what = f"--output={output}"
    wd = kc.workdir()
    kob_args = f"--quiet {kc.CHROME}" + (f" --output={output}" if output else "")
    rc, out, err = mpirun_run({"OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": kob_args}, wd)
    if not kc.check(rc is not None, f"{what}: no hang (killed after {TIMEOUT} s)"):
        continue
    kc.expect_eq(rc, base_rc, f"{what}: exit code")
    kc.expect_eq(out, base_out, f"{what}: stdout")
    traces = sorted(glob.glob(os.path.join(wd, "**", "*.trace.json"), recursive=True))
    kc.expect_eq(len(traces), NP, f"{what}: one trace per rank: {[os.path.relpath(t, wd) for t in traces]}")
    ranks = set()
    for path in traces:
        prefix = os.path.relpath(path, wd)[: -len(".trace.json")]
        try:
            with open(path) as f:
                doc = kc.json_load(f)
        except ValueError as e:
            kc.check(False, f"{what}: {prefix}.trace.json is valid JSON ({e})")
            continue
        kc.validate_trace(doc)
        rank, pid = doc["otherData"].get("rank"), doc["otherData"]["pid"]
        ranks.add(rank)
        kc.expect_eq(prefix, name(rank, pid), f"{what}: file name of rank {rank}")
        kc.expect_eq(len(kc.events(doc, "omp.parallel", "X")), rank + 1 if rank is not None else -1,
                     f"{what}: rank {rank}'s own parallel regions")
        kc.check("mpi" not in doc["otherData"] and not kc.events(doc, "mpi"), f"{what}: no MPI facts or spans without the layer")
        for ext in (".summary.txt", ".summary.json"):
            kc.check(os.path.isfile(os.path.join(wd, prefix + ext)), f"{what}: {prefix}{ext} written")
        with open(os.path.join(wd, prefix + ".summary.json")) as f:
            kc.expect_eq(kc.json_load(f)["otherData"].get("rank"), rank, f"{what}: the summary is rank {rank}'s")
    kc.expect_eq(ranks, set(range(NP)), f"{what}: every rank's files")
    notes = [l for l in err.splitlines() if "no placeholder that tells this process" in l]
    kc.expect_eq(sorted(notes), sorted(
        f"kokkos-ompt-bridge: warning: --output=run has no placeholder that tells this process (MPI rank {r}) from the "
        f"others: writing run-r{r}.* instead, so that no process overwrites another's files" for r in range(NP)) if note
        else [], f"{what}: one line per rank about the name")
    kc.expect_eq(glob.glob(os.path.join(wd, "**", "*.tmp.*"), recursive=True), [], f"{what}: no temporary file left")

# `mpirun -np 4 kob run -- PROGRAM`: kob loads the library in every rank; each rank's files, and
# one line per rank naming them.
if a.kob:
    wd = kc.workdir()
    rc, out, err = mpirun_run({"OMP_NUM_THREADS": "2"}, wd,
                              [os.path.abspath(a.kob), "run", "--output=kr-%r", kc.CHROME, "--"])
    if kc.check(rc is not None, f"kob run under mpirun: no hang (killed after {TIMEOUT} s)"):
        kc.expect_eq(rc, base_rc, "kob run under mpirun: exit code")
        kc.expect_eq(out, base_out, "kob run under mpirun: stdout")
        for r in range(NP):
            path = os.path.join(wd, f"kr-{r}.trace.json")
            if not kc.check(os.path.isfile(path), f"kob run under mpirun: rank {r}'s trace"):
                continue
            with open(path) as f:
                doc = kc.json_load(f)
            kc.expect_eq(len(kc.events(doc, "omp.parallel", "X")), r + 1, f"kob run under mpirun: rank {r}'s parallel regions")
        named = sorted(l.split(" wrote ")[1].split(", ")[0] for l in err.splitlines() if l.startswith("kob: pid ") and " wrote " in l)
        kc.expect_eq(named, [f"kr-{r}.kob" for r in range(NP)], "kob run under mpirun: one line per rank naming its files")


def layer_run(shift_rank, shift_ns, wd):
    """`mpirun -np 4 kob run --mpi --output=r-%r -- PROGRAM`, KOB_TEST_CLOCK_SHIFT_NS=shift_ns on
    rank shift_rank only (an MPMD command line: one app context per group of ranks)."""
    app = [os.path.abspath(a.kob), "run", "--mpi", "--output=r-%r", kc.CHROME, "--", prog]
    groups = [(shift_rank, {}), (1, {"KOB_TEST_CLOCK_SHIFT_NS": str(shift_ns)}), (NP - shift_rank - 1, {})]
    # Every context has an environment: the sanitizer build's runtime goes to each.
    contexts = [(n, dict(extra, OMP_NUM_THREADS="2"), app) for n, extra in groups if n]
    return mpi_launch.run(mpirun, contexts, wd, TIMEOUT)


# The PMPI layer (`kob run --mpi`): each rank's clock offset to rank 0, measured after MPI_Init and
# before MPI_Finalize, in the raw trace and otherData; one rank's time line shifted by 5 ms
# (KOB_TEST_CLOCK_SHIFT_NS) shows as that rank's offset, the others' stay near 0 (one host).
layer = os.path.join(os.path.dirname(os.path.abspath(a.kob or ".")), f"libkob_mpi_{a.family}.so")
if a.kob and kc.check(os.path.isfile(layer), f"the PMPI layer is built beside kob ({layer})"):
    SHIFT_RANK, SHIFT = 2, 5_000_000
    # ns: same host, shared memory. A ping-pong's offset is off by at most half its round trip
    # (the two legs' difference): with 4 ranks on 2 cores a round trip can take 200 us, so each
    # measurement is held to max(5 us, its own round trip / 2).
    TOLERANCE = 5_000
    wd = kc.workdir()
    rc, out, err = layer_run(SHIFT_RANK, SHIFT, wd)
    what = "kob run --mpi"
    if kc.check(rc is not None, f"{what}: no hang (killed after {TIMEOUT} s)"):
        kc.expect_eq(rc, base_rc, f"{what}: exit code")
        kc.expect_eq(out, base_out, f"{what}: stdout")
        kc.check(not any(l.startswith("kob: clock offsets") for l in err.splitlines()), f"{what}: no measurement failed ({err[-500:]!r})")
        docs = {}
        for r in range(NP):
            path = os.path.join(wd, f"r-{r}.trace.json")
            if not kc.check(os.path.isfile(path), f"{what}: rank {r}'s trace"):
                continue
            with open(path) as f:
                docs[r] = kc.json_load(f)
            kc.validate_trace(docs[r])
        for r, doc in docs.items():
            mpi = doc["otherData"].get("mpi")
            if not kc.check(isinstance(mpi, dict), f"{what}: rank {r}'s otherData has mpi ({doc['otherData']})"):
                continue
            kc.expect_eq((mpi.get("rank"), mpi.get("size")), (r, NP), f"{what}: rank {r}'s mpi rank and size")
            with open(os.path.join(wd, f"r-{r}.summary.json")) as f:
                kc.expect_eq(kc.json_load(f)["otherData"].get("mpi"), mpi, f"{what}: rank {r}'s summary has the same mpi facts")
            for phase in ("clock_start", "clock_end"):
                c = mpi.get(phase)
                if not kc.check(isinstance(c, dict) and set(c) == {"local_ns", "offset_ns", "rtt_ns"},
                                f"{what}: rank {r}'s {phase} ({c})"):
                    continue
                if r == 0:
                    kc.expect_eq((c["offset_ns"], c["rtt_ns"]), (0, 0), f"{what}: rank 0's {phase} offset and rtt")
                    continue
                expected = SHIFT if r == SHIFT_RANK else 0
                kc.check(c["rtt_ns"] > 0, f"{what}: rank {r}'s {phase} round trip ({c})")
                bound = max(TOLERANCE, c["rtt_ns"] // 2 + 1)
                kc.check(abs(c["offset_ns"] - expected) <= bound,
                         f"{what}: rank {r}'s {phase} offset {c['offset_ns']} ns within {bound} ns of {expected} ({c})")
            print(f"{what}: rank {r}: " + ", ".join(f"{ph} offset {mpi[ph]['offset_ns']} ns rtt {mpi[ph]['rtt_ns']} ns"
                                                    for ph in ("clock_start", "clock_end") if ph in mpi))
            # The MPI calls as spans: mpi_omp makes one MPI_Allreduce of one long.
            calls = kc.events(doc, "mpi", "X")
            kc.expect_eq([(e["name"], e["args"].get("bytes"), e["args"].get("peer")) for e in calls], [("MPI_Allreduce", 8, -1)],
                         f"{what}: rank {r}'s MPI call spans")
            with open(os.path.join(wd, f"r-{r}.summary.json")) as f:
                kc.expect_eq([(m["name"], m["calls"]) for m in kc.json_load(f).get("mpi_calls", [])], [("MPI_Allreduce", 1)],
                             f"{what}: rank {r}'s summary of MPI calls")
            if "clock_start" in mpi and "clock_end" in mpi:
                kc.check(mpi["clock_start"]["local_ns"] < mpi["clock_end"]["local_ns"], f"{what}: rank {r}: start before end")
        # The shifted rank's whole time line moved: its wall reference (the monotonic clock read
        # with the realtime clock) is 5 ms further from the realtime clock than rank 0's.
        if 0 in docs and SHIFT_RANK in docs:
            def gap(doc):
                w = doc["otherData"]["wall_reference"]
                return w["monotonic_raw_ns"] - w["realtime_ns"]
            moved = gap(docs[SHIFT_RANK]) - gap(docs[0])
            kc.check(abs(moved - SHIFT) <= 100_000, f"{what}: rank {SHIFT_RANK}'s time line moved by {moved} ns, the shift {SHIFT}")
        # The raw trace holds the facts: kob convert gives the same otherData.mpi.
        if SHIFT_RANK in docs:
            crc, cout, cerr = kc.run([a.kob, "convert", "--quiet", "--to=json", f"--output={wd}/conv",
                                      os.path.join(wd, f"r-{SHIFT_RANK}.kob")])
            if kc.check(crc == 0, f"{what}: kob convert of rank {SHIFT_RANK}'s raw trace ({cerr[-300:]!r})"):
                with open(os.path.join(wd, "conv.summary.json")) as f:
                    kc.expect_eq(kc.json_load(f)["otherData"].get("mpi"), docs[SHIFT_RANK]["otherData"].get("mpi"),
                                 f"{what}: the raw trace's mpi facts")
kc.finish()
