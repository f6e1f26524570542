"""mpirun for the MPI tests: OpenMPI on loopback and shared memory only (or MPICH's Hydra, local), as root when needed,
oversubscribed, OpenMP threads that sleep when idle; in the sanitizer build every app context's
ranks get the sanitizer runtime first in LD_PRELOAD (mpirun itself does not), with leak checking
off in them (OpenMPI leaks by design: components dlclosed with their allocations, which LSan
cannot even name; the other tests check the library's leaks)."""
import os
import shutil
import signal
import subprocess

import kob_check as kc

BASE_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMP_NUM_THREADS": "2",
            "KMP_BLOCKTIME": "0", "OMP_PROC_BIND": "false"}
OPTIONS = ["--oversubscribe", "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo"]


def exports(env_extra, sanitize=True):
    """-x options that give the ranks env_extra (and, in the sanitizer build, the runtime)."""
    env_extra = dict(env_extra)
    if sanitize and kc.SANITIZER_PRELOAD:
        env_extra["LD_PRELOAD"] = kc.program_env(env_extra)["LD_PRELOAD"]
        env_extra["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    out = []
    for k, v in env_extra.items():
        out += ["-x", f"{k}={v}"]
    return out


# The variable each family's launcher gives a rank its number in.
RANK_VARIABLE = {"openmpi": "OMPI_COMM_WORLD_RANK", "mpich": "PMI_RANK"}


def add_family_argument(ap):
    ap.add_argument("--family", choices=sorted(RANK_VARIABLE), default="openmpi",
                    help="the program's MPI: its launcher (mpirun.openmpi / mpirun.mpich) and its PMPI layer (libkob_mpi_FAMILY.so)")


def mpirun_for(family):
    """The family's mpirun (Debian: mpirun.openmpi, mpirun.mpich; plain mpirun is Open MPI's), or None."""
    return shutil.which("mpirun." + family) or (shutil.which("mpirun") if family == "openmpi" else None)


def is_hydra(mpirun):
    """MPICH's mpirun (Hydra: mpirun.mpich, mpiexec.hydra) takes -env NAME VALUE per context and
    none of Open MPI's options."""
    return "mpich" in os.path.basename(mpirun) or "hydra" in os.path.basename(mpirun)


def run(mpirun, contexts, cwd, timeout):
    """contexts: [(ranks, env_extra, command)], one app context each (MPMD when several). Returns
    (exit status or None after a hang, stdout, stderr)."""
    env = dict(os.environ)
    env.update(BASE_ENV)
    hydra = is_hydra(mpirun)
    cmd = [mpirun] + ([] if hydra else OPTIONS)
    for i, (n, env_extra, command) in enumerate(contexts):
        # A program without the tool runs as it is, sanitizer runtime or not.
        exported = exports(env_extra, sanitize=bool(env_extra))
        if hydra:
            exported = [x for pair in zip(exported[::2], exported[1::2]) for x in ["-env"] + pair[1].split("=", 1)]
        cmd += ([":"] if i else []) + ["-np", str(n)] + exported + list(command)
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        kc.check_no_sanitizer_report(err, contexts[0][2][-1])
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
