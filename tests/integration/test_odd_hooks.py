"""Bad inputs through the Kokkos hooks: the program lives on with its output and exit code, every
tool message is one line, the files are valid and name the problems."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
wd = kc.workdir()
prefix = os.path.join(wd, "odd")
report = kc.written_report()
rc, out, err = kc.run([os.path.abspath(a.program), os.path.abspath(a.lib)],
                      {"KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}", "KOB_RUN_REPORT": report}, cwd=wd)
kc.expect_eq(rc, 0, "exit code (1 would mean a leaked file descriptor)")
kc.check(out.startswith("done fds "), f"program ran to its end: {out!r}")
lines = err.strip().splitlines()
kc.check(all(l.startswith("kokkos-ompt-bridge: ") for l in lines), f"every stderr line is a one-line tool message: {lines}")
kc.expect_eq(sum("no-such-option" in l for l in lines), 1, "one warning for the unknown option")
kc.expect_eq(sum("null name" in l for l in lines), 1, "null names warned about once")
kc.expect_eq(len(kc.written(report)), 1, "files written exactly once")
kc.expect_eq(sum(" wrote " in l for l in lines), 0, "--quiet: no line naming the files")
kc.check(any(": warning: kokkosp_pop_profile_region with no region open" in l for l in lines),
         "under --quiet, the problems reach stderr as warnings")

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
problems = "\n".join(summary["problems"])
for what in ("kokkosp_end_parallel_* with an id that no begin hook returned",
             "kokkosp_pop_profile_region with no region open",
             "kokkosp_stop_profile_section on a section not started",
             "kokkosp_end_deep_copy with no deep copy open",
             "kokkosp_deallocate_data of a block with no recorded allocation",
             "a Kokkos kernel never ended",
             "a Kokkos profile region never popped"):
    kc.check(what in problems, f"summary names the problem: {what}")
names = {e["name"] for e in kc.events(trace, "kokkos.kernel")}
kc.expect_eq(names, {"<null>", "never ended"}, "kernels recorded before finalize only")
kc.expect_eq({e["args"]["space"] for e in kc.events(trace, "kokkos.alloc")}, {"H" * 63}, "unterminated space name cut at 63")
kc.finish()
