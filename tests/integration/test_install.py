"""`meson install` as a new user runs it: into a temporary --destdir, then the installed `kob run`
on the Kokkos + OpenMP sample. kob lands in bindir (not beside the library) and finds the installed
library relative to its own folder, KOB_LIBRARY overriding it; the installed library names the
installed kob in its crash line; pkg-config gives the library's full path (tool_library) and kob's."""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--meson", required=True)
ap.add_argument("--builddir", required=True)
ap.add_argument("--prefix", required=True)
ap.add_argument("--bindir", required=True)
ap.add_argument("--libdir", required=True)
ap.add_argument("--lib", required=True, help="the build tree's library")
ap.add_argument("--sample", required=True, help="the Kokkos + OpenMP sample")
ap.add_argument("--victim", required=True, help="signal_victim")
a = ap.parse_args()
TOOL_VARS = ["KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "OMP_TOOL_LIBRARIES", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "KOB_LIBRARY"]
ENV = {"OMP_NUM_THREADS": "2"}
sample = os.path.abspath(a.sample)

wd = kc.workdir()
dest = os.path.join(wd, "dest")
p = subprocess.run([a.meson, "install", "-C", a.builddir, "--no-rebuild", "--quiet", "--destdir", dest],
                   capture_output=True, text=True, timeout=300)
if not kc.expect_eq(p.returncode, 0, f"meson install --destdir ({p.stdout[-500:]}{p.stderr[-500:]})"):
    kc.finish()


def under(d):
    return dest + (d if os.path.isabs(d) else os.path.join(a.prefix, d))


root = under(a.prefix)
bindir, libdir = under(a.bindir), under(a.libdir)
kob = os.path.join(bindir, "kob")
lib = os.path.join(libdir, "libkokkos_ompt_bridge.so")
kc.check(os.path.isfile(kob) and os.access(kob, os.X_OK), f"kob is installed into bindir: {kob}")
kc.check(not os.path.exists(os.path.join(libdir, "kob")), "no kob in the library folder")
kc.check(os.path.isfile(lib), f"the tool library is installed into libdir: {lib}")

# pkg-config: the tool library's full path, for KOKKOS_TOOLS_LIBS=$(pkg-config --variable=tool_library ...).
pc_dir = os.path.join(libdir, "pkgconfig")
kc.check(os.path.isfile(os.path.join(pc_dir, "kokkos-ompt-bridge.pc")), "the pkg-config file is installed")
for var, want in (("tool_library", lib), ("kob", kob)):
    p = subprocess.run(["pkg-config", f"--define-variable=prefix={root}", f"--variable={var}", "kokkos-ompt-bridge"],
                       env={**os.environ, "PKG_CONFIG_PATH": pc_dir}, capture_output=True, text=True)
    kc.expect_eq((p.returncode, p.stdout.strip()), (0, want), f"pkg-config --variable={var}")

# The installed kob run: the sample's output and exit status, the files, the events of the build
# tree's library loaded through the variables.
rc0, out0, _ = kc.run([sample], ENV, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc0, 0, "the sample without the tool")
ref = os.path.join(wd, "ref")
rc, _, err = kc.run([sample], {**ENV, "KOKKOS_PROFILE_LIBRARY": a.lib, "OMP_TOOL_LIBRARIES": a.lib,
                               "KOB_ARGS": f"--quiet --output={ref} {kc.CHROME}"}, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc, 0, f"the sample with the build tree's library ({err[-300:]!r})")
prefix = os.path.join(wd, "installed")
rc, out, err = kc.run([kob, "run", f"--output={prefix}", kc.CHROME, "--", sample], ENV, cwd=wd, unset=TOOL_VARS)
kc.expect_eq(rc, 0, f"installed kob run: the sample's exit status ({err[-400:]!r})")
kc.expect_eq(out, out0, "installed kob run: the program's stdout unchanged")
files = [prefix + ext for ext in (".kob", ".trace.json", ".summary.txt", ".summary.json")]
named = [l for l in err.splitlines() if l.startswith("kob: pid ")]
kc.check(len(named) == 1 and kc.wrote_line(named[0]).endswith(" wrote " + ", ".join(files)), f"installed kob run names the files: {named}")
if all(kc.check(os.path.isfile(f), f"installed kob run: {os.path.basename(f)} written") for f in files):
    trace, summary = kc.load_outputs(prefix)
    ref_trace, ref_summary = kc.load_outputs(ref)
    kc.validate_trace(trace)
    names = lambda doc: sorted(e["name"] for e in kc.events(doc, "kokkos.kernel", "X"))  # noqa: E731
    kc.check(len(names(trace)) > 0, "installed kob run: kernels recorded")
    kc.expect_eq(names(trace), names(ref_trace), "installed kob run: the kernels of the build tree's library")
    kc.expect_eq(len(kc.events(trace, "omp.parallel", "X")), len(kc.events(ref_trace, "omp.parallel", "X")),
                 "installed kob run: the OpenMP parallel regions of the build tree's library")
    kc.expect_eq(sorted((k["name"], k["calls"]) for k in summary["kernels"]), sorted((k["name"], k["calls"]) for k in ref_summary["kernels"]),
                 "installed kob run: kernel calls in the summary")


def crash_command(env_extra):
    """The `kob` command named by the crash line of the library that installed kob loads."""
    out = os.path.join(wd, "crash")
    rc, _, err = kc.run([kob, "run", f"--output={out}", "--", os.path.abspath(a.victim), "abort", "none", "3"],
                        {**ENV, **env_extra}, cwd=wd, unset=[v for v in TOOL_VARS if v not in env_extra])
    kc.expect_eq(rc, -6, "the crashing program ends by SIGABRT under kob run")
    m = re.search(r"^kob: the program ended with SIGABRT; its events are in \S+: run '(\S+) convert ", err, re.M)
    return m.group(1) if kc.check(m is not None, f"a crash line: {err[-600:]!r}") else None


# The installed library finds the installed kob (bindir relative to libdir) for its crash line.
kc.expect_eq(crash_command({}), os.path.realpath(kob), "the installed library names the installed kob")
# KOB_LIBRARY wins: the build tree's library is loaded, and names the kob beside it.
kc.expect_eq(crash_command({"KOB_LIBRARY": a.lib}), os.path.join(os.path.dirname(os.path.realpath(a.lib)), "kob"),
             "KOB_LIBRARY: the build tree's library is loaded instead")

# A kob copied away from any library says where it looked, in one line, and runs nothing.
alone = os.path.join(wd, "alone")
os.makedirs(alone)
shutil.copy2(kob, alone)
rc, out, err = kc.run([os.path.join(alone, "kob"), "run", "--", "true"], unset=TOOL_VARS)
lines = [l for l in kc.without_sanitizer_notes(err.splitlines()) if l.strip()]
kc.expect_eq(rc, 2, "kob with no library beside it or in ../lib: exit status 2")
kc.check(len(lines) == 1 and "libkokkos_ompt_bridge.so is in neither " + alone in lines[0], f"one line saying where it looked: {lines}")
kc.finish()
