"""kob run sets only the Kokkos tool variable the program's Kokkos reads, told from its ELF file:
- kokkos_env_probe (Kokkos 3.4.1 linked statically): KOKKOS_PROFILE_LIBRARY only, and its kernel
  is recorded;
- a program needing libkokkoscore.so.4.6 (fake_kokkoscore, which warns as Kokkos 4.6 does when
  KOKKOS_PROFILE_LIBRARY is set): KOKKOS_TOOLS_LIBS only, and its stdout and stderr are the same as
  without kob (no deprecation warning, nothing but kob's own `kob: ` lines);
- a program needing libkokkoscore.so.3.4: KOKKOS_PROFILE_LIBRARY only;
- the same Kokkos 4.6 program started by a shell script: kob cannot tell, says so in one line and
  sets both; a program without Kokkos (env): both, nothing said."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
for name in ("kob", "probe", "app4", "lib4", "app3", "lib3"):
    ap.add_argument("--" + name, required=True)
a = ap.parse_args()
kob, probe = os.path.abspath(a.kob), os.path.abspath(a.probe)
wd = kc.workdir()
TOOL_VARS = ["KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "LD_PRELOAD"]


def lib_dir(name, lib, soname):
    """A folder holding the stand-in under its soname, as an installed Kokkos would be."""
    d = os.path.join(wd, name)
    os.makedirs(d, exist_ok=True)
    os.symlink(os.path.abspath(lib), os.path.join(d, soname))
    return d


def kob_lines(err):
    return [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.startswith("kob: ")]


def others(err):
    return [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip() and not l.startswith("kob: ")]


def kob_run(prog, env, *opts):
    return kc.run([kob, "run", f"--output={os.path.join(wd, 'r')}", "--format=json"] + list(opts) + ["--", prog], env,
                  cwd=wd, unset=TOOL_VARS)


# Kokkos 3.4.1, static.
rc, out, err = kob_run(probe, {"OMP_NUM_THREADS": "2"})
kc.expect_eq((rc, out.splitlines()[:1]), (0, ["KOKKOS_TOOLS_LIBS unset, KOKKOS_PROFILE_LIBRARY set"]),
             f"static Kokkos 3.4.1: KOKKOS_PROFILE_LIBRARY only ({err[-300:]})")
kc.expect_eq(others(err), [], "static Kokkos 3.4.1: nothing on stderr but kob's lines")
kc.check(not any("cannot tell" in l for l in kob_lines(err)), f"static Kokkos 3.4.1: told ({kob_lines(err)})")
with open(os.path.join(wd, "r.summary.json")) as f:
    import json
    kc.expect_eq([k["name"] for k in kc.json_load(f)["kernels"] if k["name"] == "probe_kernel"], ["probe_kernel"],
                 "static Kokkos 3.4.1: the tool was loaded (its kernel recorded)")

# Kokkos 4.6 and 3.4 as shared libraries.
for app, lib, soname, want in ((a.app4, a.lib4, "libkokkoscore.so.4.6", "KOKKOS_TOOLS_LIBS set, KOKKOS_PROFILE_LIBRARY unset"),
                               (a.app3, a.lib3, "libkokkoscore.so.3.4", "KOKKOS_TOOLS_LIBS unset, KOKKOS_PROFILE_LIBRARY set")):
    env = {"LD_LIBRARY_PATH": lib_dir(soname, lib, soname) + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
    rc0, out0, err0 = kc.run([os.path.abspath(app)], env, cwd=wd, unset=TOOL_VARS)
    rc, out, err = kob_run(os.path.abspath(app), env)
    kc.expect_eq((rc, out.splitlines()), (rc0, ["tool library read: set", want]), f"{soname}: the variable it reads only")
    kc.expect_eq(others(err), others(err0), f"{soname}: the program's stderr as without kob (no deprecation warning)")
    kc.check(not any("cannot tell" in l for l in kob_lines(err)), f"{soname}: told ({kob_lines(err)})")

# A script in front: cannot tell, said once, both set (the Kokkos 4 stand-in then warns, as Kokkos 4 does).
script = os.path.join(wd, "start.sh")
with open(script, "w") as f:
    f.write(f"#!/bin/sh\nexec {os.path.abspath(a.app4)}\n")
os.chmod(script, 0o755)
env = {"LD_LIBRARY_PATH": os.path.join(wd, "libkokkoscore.so.4.6") + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
rc, out, err = kob_run(script, env)
told = [l for l in kob_lines(err) if "cannot tell" in l]
kc.check(rc == 0 and len(told) == 1 and "start.sh is not an ELF program" in told[0], f"a script: one line ({kob_lines(err)})")
kc.expect_eq(out.splitlines()[-1:], ["KOKKOS_TOOLS_LIBS set, KOKKOS_PROFILE_LIBRARY set"], "a script: both set")

# No Kokkos at all: both, nothing said.
rc, out, err = kob_run("env", {})
kc.check(rc == 0 and "KOKKOS_TOOLS_LIBS=" in out and "KOKKOS_PROFILE_LIBRARY=" in out, "no Kokkos: both set")
kc.check(not any("cannot tell" in l for l in kob_lines(err)), f"no Kokkos: nothing said ({kob_lines(err)})")

kc.finish()
