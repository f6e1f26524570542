"""--kokkos-tools-help: Kokkos calls kokkosp_print_help, then finalizes and exits. The help is
printed and the run writes no file and prints no summary. Through the real Kokkos 3.4.1 sample
and through a driver calling the hooks as Kokkos 4.x does."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--driver", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--sample", help="kokkos_sample (Kokkos 3.4.1)")
a = ap.parse_args()
driver, lib = os.path.abspath(a.driver), os.path.abspath(a.lib)

runs = [("4.x order", [driver, lib, "--kokkos-tools-help"], {})]
if a.sample:
    runs.append(("Kokkos 3.4.1", [os.path.abspath(a.sample), "--kokkos-tools-help"], {"KOKKOS_PROFILE_LIBRARY": lib}))
for what, cmd, env in runs:
    wd = kc.workdir()
    # The default output prefix would put the files in the working directory.
    rc, out, err = kc.run(cmd, env, cwd=wd, unset=("KOB_ARGS", "KOKKOS_TOOLS_ARGS"))
    kc.expect_eq(rc, 0, f"{what}: exit code")
    for opt in ("--output=PREFIX", "--include=REGEX", "--memory-limit=MIB", "--exact-kernel-end"):
        kc.check(opt in out, f"{what}: the help lists {opt}")
    kc.expect_eq(os.listdir(wd), [], f"{what}: no file written")
    kc.expect_eq(err, "", f"{what}: nothing on stderr (no summary, no 'wrote' line)")
kc.finish()
