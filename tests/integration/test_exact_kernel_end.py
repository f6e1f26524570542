"""--exact-kernel-end fences exactly once before each kernel end: Kokkos' own global fencing when
the option was known when Kokkos asked for the tool's settings (KOB_ARGS / KOKKOS_TOOLS_ARGS),
else the library's tool-invoked fence (option only on the command line). Kokkos 4.x order through
a driver (no Kokkos 4.x here); Kokkos 3.4.1 through the real sample, counting Kokkos::fence()."""
import argparse
import json
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--driver", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--sample", help="kokkos_sample linked with a shared Kokkos 3.4.1")
ap.add_argument("--fence-counter", help="LD_PRELOAD library counting Kokkos::fence()")
a = ap.parse_args()
driver, lib = os.path.abspath(a.driver), os.path.abspath(a.lib)

# Kokkos 4.x order: (environment, command line) -> fences before each kernel end, global fencing kept on.
KERNELS = 5
for env_args, cmd_args, per_kernel, global_fencing in (("", [], 0, 0),
                                                        ("--exact-kernel-end", [], 1, 1),
                                                        ("", ["--exact-kernel-end"], 1, 0),
                                                        ("--exact-kernel-end", ["--exact-kernel-end"], 1, 1)):
    wd = kc.workdir()
    rc, out, err = kc.run([driver, lib, f"--kernels={KERNELS}", "--", "--quiet", f"--output={wd}/k"] + cmd_args,
                          {"KOKKOS_TOOLS_ARGS": env_args}, cwd=wd, unset=("KOB_ARGS",))
    what = f"4.x order, KOKKOS_TOOLS_ARGS={env_args!r}, command line {cmd_args}"
    kc.expect_eq(rc, 0, f"{what}: exit code")
    kc.expect_eq(out.strip(), f"kernels {KERNELS} fences_at_kernel_end {per_kernel * KERNELS} global_fencing {global_fencing}",
                 f"{what}: fences before the kernel ends")

# Kokkos 3.4.1 (the real program): Kokkos::fence() calls counted against a run without the option.
if a.sample and a.fence_counter:
    sample, counter = os.path.abspath(a.sample), os.path.abspath(a.fence_counter)

    def fences(kob_args, tools_args):
        wd = kc.workdir()
        count = os.path.join(wd, "fences")
        cmd = [sample] + ([f"--kokkos-tools-args={tools_args}"] if tools_args else [])
        rc, _, _ = kc.run(cmd, {"KOKKOS_PROFILE_LIBRARY": lib, "LD_PRELOAD": counter, "FENCE_COUNT_FILE": count,
                                "KOB_ARGS": f"{kob_args} --quiet --output={wd}/s {kc.CHROME}"}, cwd=wd)
        kc.expect_eq(rc, 0, f"3.4.1 sample, KOB_ARGS={kob_args!r}, tools args {tools_args!r}: exit code")
        with open(count) as f:
            n = int(f.read())
        with open(f"{wd}/s.trace.json") as f:
            doc = kc.json_load(f)
        return n, len(kc.events(doc, "kokkos.kernel")), len(kc.events(doc, "kokkos.region"))

    base, kernels, regions = fences("", "")
    kc.check(kernels > 0 and regions > 0, "the sample runs kernels inside regions")
    # Option in the environment: Kokkos fences before every kernel and region hook, we add none.
    env_fences, _, _ = fences("--exact-kernel-end", "")
    kc.expect_eq(env_fences - base, 2 * kernels + 2 * regions,
                 "3.4.1, option in KOB_ARGS: Kokkos' global fences only (begin+end of each kernel and region)")
    # Option only on the command line (parsed after Kokkos asked for settings): our fence at each kernel end.
    cmd_fences, _, _ = fences("", "--exact-kernel-end")
    kc.expect_eq(cmd_fences - base, kernels, "3.4.1, option on the command line: one fence of ours per kernel end")
kc.finish()
