"""The PMPI layer per MPI ABI (issue 21): libkob_mpi_openmpi.so and libkob_mpi_mpich.so.
- `mpirun.mpich -np 4 kob run --mpi -- PROGRAM` (PROGRAM linked with libmpich): kob says once that it
  preloads the MPICH-family layer; exit status and stdout as without the tool; every rank's trace has
  its MPI rank and size, both clock measurements and the one MPI_Allreduce as a span of 8 bytes.
- The wrong layer preloaded by hand, both ways (the Open MPI layer into the MPICH program under
  mpirun.mpich, the MPICH layer into the Open MPI program under Open MPI's mpirun), with the tool:
  exit status, stdout (the MPI_Allreduce's result) as without the tool, one line per rank saying the
  layer only forwards, no MPI facts or spans in the files (the tool runs as without a layer).
- `kob run --mpi` on a program without MPI: one line (cannot tell), the run goes on unchanged.
- Each layer has no link to any MPI library (no DT_NEEDED on one)."""
import argparse
import json
import os
import subprocess

import kob_check as kc
import mpi_launch

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--mpich-program", required=True)
ap.add_argument("--openmpi-program", required=True)
ap.add_argument("--plain-program", required=True)
a = ap.parse_args()
lib, kob = os.path.abspath(a.lib), os.path.abspath(a.kob)
layers = {f: os.path.join(os.path.dirname(kob), f"libkob_mpi_{f}.so") for f in ("openmpi", "mpich")}
mpirun = {f: mpi_launch.mpirun_for(f) for f in ("mpich", "openmpi")}
programs = {"mpich": os.path.abspath(a.mpich_program), "openmpi": os.path.abspath(a.openmpi_program)}
NP, TIMEOUT = 4, 180
FORWARDS = "it only forwards the MPI calls"

for family, path in layers.items():
    kc.check(os.path.isfile(path), f"the {family} layer is built beside kob ({path})")
    p = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    needed = [l.split("[")[1].rstrip("]") for l in p.stdout.splitlines() if "(NEEDED)" in l]
    kc.check(not any("mpi" in n for n in needed), f"the {family} layer names no MPI library: {needed}")
for family, path in mpirun.items():
    kc.check(path is not None, f"mpirun for {family} is installed (scripts/setup.sh)")
if kc.failures:
    kc.finish()


def launch(family, env_extra, command, wd):
    return mpi_launch.run(mpirun[family], [(NP, dict(env_extra, OMP_NUM_THREADS="2"), command)], wd, TIMEOUT)


def traces(wd, prefix):
    docs = {}
    for r in range(NP):
        path = os.path.join(wd, f"{prefix}-{r}.trace.json")
        if kc.check(os.path.isfile(path), f"{prefix}: rank {r}'s trace"):
            with open(path) as f:
                docs[r] = kc.json_load(f)
            kc.validate_trace(docs[r])
    return docs


baseline = {}
for family in ("mpich", "openmpi"):
    rc, out, err = launch(family, {}, [programs[family]], kc.workdir())
    kc.expect_eq((rc, out), (0, "ranks 4 total 40\n"), f"{family}: the program without the tool ({err[-300:]!r})")
    baseline[family] = (rc, out)

# ---- kob run --mpi on the MPICH program: the MPICH-family layer, recording ----------------------
wd = kc.workdir()
rc, out, err = launch("mpich", {}, [kob, "run", "--mpi", "--output=m-%r", kc.CHROME, "--", programs["mpich"]], wd)
what = "mpich, kob run --mpi"
kc.expect_eq((rc, out), baseline["mpich"], f"{what}: exit status and stdout as without the tool ({err[-500:]!r})")
chose = [l for l in err.splitlines() if l.startswith("kob: run: --mpi:")]
kc.expect_eq(chose, ["kob: run: --mpi: the program uses libmpich.so.12: preloading libkob_mpi_mpich.so"],
             f"{what}: one line says which layer")
for r, doc in traces(wd, "m").items():
    mpi = doc["otherData"].get("mpi") or {}
    kc.expect_eq((mpi.get("rank"), mpi.get("size")), (r, NP), f"{what}: rank {r}'s MPI rank and size")
    kc.check({"clock_start", "clock_end"} <= set(mpi), f"{what}: rank {r}'s clock offsets measured ({mpi})")
    calls = [(e["name"], e["args"].get("bytes")) for e in kc.events(doc, "mpi", "X")]
    kc.expect_eq(calls, [("MPI_Allreduce", 8)], f"{what}: rank {r}'s MPI call spans")

# ---- the wrong layer by hand, both ways: unharmed, one line, nothing recorded from it -----------
for layer_family, program_family in (("openmpi", "mpich"), ("mpich", "openmpi")):
    wd = kc.workdir()
    what = f"the {layer_family} layer in the {program_family} program"
    env = {"LD_PRELOAD": layers[layer_family], "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output=w-%r --quiet {kc.CHROME}"}
    rc, out, err = launch(program_family, env, [programs[program_family]], wd)
    kc.expect_eq((rc, out), baseline[program_family], f"{what}: exit status, stdout and the MPI result ({err[-500:]!r})")
    kc.expect_eq(sum(FORWARDS in l for l in err.splitlines()), NP, f"{what}: one line per rank says it only forwards")
    for r, doc in traces(wd, "w").items():
        kc.check("mpi" not in doc["otherData"] and not kc.events(doc, "mpi"), f"{what}: rank {r}: no MPI facts or spans")
        kc.expect_eq(len(kc.events(doc, "omp.parallel", "X")), r + 1, f"{what}: rank {r}'s parallel regions recorded")

# ---- kob run --mpi on a program without MPI ------------------------------------------------------
wd = kc.workdir()
rc0, out0, _ = kc.run([os.path.abspath(a.plain_program)], {"OMP_NUM_THREADS": "2"}, cwd=wd)
rc, out, err = kc.run([kob, "run", "--mpi", "--output=plain", "--quiet", kc.CHROME, "--", os.path.abspath(a.plain_program)],
                      {"OMP_NUM_THREADS": "2"}, cwd=wd)
kc.expect_eq((rc, out), (rc0, out0), "kob run --mpi without MPI: exit status and stdout as without the tool")
kc.check(any(l.startswith("kob: run: --mpi: cannot tell the program's MPI") for l in err.splitlines()),
         f"kob run --mpi without MPI: one line says it runs without the layer ({err[-300:]!r})")
kc.check(os.path.isfile(os.path.join(wd, "plain.trace.json")), "kob run --mpi without MPI: the files are written")
kc.finish()
