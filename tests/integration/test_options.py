"""Options as users give them: bad ones warn in one line and the run goes on; outputs follow
--output/--format/--events/--include/--exclude/--quiet; the command line wins over the environment."""
import argparse
import glob
import json
import os
import re

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
prog, lib = os.path.abspath(a.program), os.path.abspath(a.lib)

base_rc, base_out, _ = kc.run([prog], unset=("KOKKOS_PROFILE_LIBRARY",))


def tool_run(args, env=None, cwd=None):
    e = {"KOKKOS_PROFILE_LIBRARY": lib}
    e.update(env or {})
    cmd = [prog] + ([f"--kokkos-tools-args={args}"] if args is not None else [])
    rc, out, err = kc.run(cmd, e, cwd=cwd or kc.workdir())
    kc.expect_eq(rc, base_rc, f"exit code with args {args!r}")
    kc.expect_eq(out, base_out, f"stdout with args {args!r}")
    return err


def tool_lines(err):
    return [l for l in err.splitlines() if l.startswith("kokkos-ompt-bridge:")]


# Bad options: one line each, naming the option; the good ones still apply.
wd = kc.workdir()
p = os.path.join(wd, "bad")
err = tool_run(f"--bogus --format=xml --memory-limit=abc --include=( --memory-limit=17592186044416 --jobs=17 --output={p} --quiet", cwd=wd)
warnings = [l for l in tool_lines(err) if ": warning:" in l]
kc.expect_eq(len(warnings), 6, f"one warning per bad option: {warnings}")
for word in ("--bogus", "--format=xml", "--memory-limit=abc", "--include=(", "--memory-limit=17592186044416", "--jobs=17"):
    kc.check(sum(word in w for w in warnings) == 1, f"a warning names {word}")
kc.check(os.path.exists(p + ".pftrace"), "--output still applies next to bad options")
kc.check("summary:" not in err, "--quiet still applies next to bad options")

# An output folder that cannot be made (a file is in the way): one line saying where the files
# went instead (the current folder), the run unharmed.
wd = kc.workdir()
open(os.path.join(wd, "blocker"), "w").close()
err = tool_run("--output=blocker/x --quiet", cwd=wd)
lines = [l for l in tool_lines(err) if ": warning:" in l]
kc.expect_eq(len(lines), 1, f"unwritable output folder: one line: {lines}")
# The raw trace was made under the default name before the option arrived (the Kokkos route's
# arguments come late): the files stay there; else they go to x.* in the current folder.
where = re.search(r"files (?:go to|stay) (\S+)\.\*", lines[0]) if lines else None
kc.check(where is not None and "blocker/" in lines[0], f"unwritable output folder: says where: {lines}")
if where:
    kc.check(os.path.isfile(os.path.join(wd, where.group(1) + ".pftrace")), f"unwritable output folder: the files are where it says: {where.group(1)}")

# --format picks the files.
wd = kc.workdir()
tool_run(f"--output={wd}/f --format=summary --quiet")
kc.expect_eq(sorted(os.listdir(wd)), ["f.kob", "f.summary.txt"], "--format=summary writes only the text summary (and the raw trace)")

# Without --quiet the summary goes to stderr too, and the last line names the files.
wd = kc.workdir()
err = tool_run(f"--output={wd}/s")
kc.check("== kokkos-ompt-bridge summary:" in err and "Kokkos kernels" in err, "summary printed on stderr")
kc.expect_eq(err.strip().splitlines()[-1],
             f"kokkos-ompt-bridge: wrote {wd}/s.pftrace, {wd}/s.summary.txt, {wd}/s.summary.json "
             f"(next: kob report {wd}/s for the HTML report, or open {wd}/s.pftrace at https://ui.perfetto.dev)",
             "last stderr line: the default formats (perfetto, summary, json), and what to do next")
with open(f"{wd}/s.summary.txt") as f:
    kc.check(f.read() in err, "the summary file holds what stderr showed")

# --exclude / --include filter kernels and regions by name.
wd = kc.workdir()
tool_run(f"--output={wd}/x --quiet --format=chrome --exclude=^Kokkos:: --include=_|^solve$|^assemble$")
with open(f"{wd}/x.trace.json") as f:
    doc = kc.json_load(f)
names = {e["name"] for e in kc.events(doc, "kokkos.kernel")}
kc.expect_eq(names, {"init_xy", "init_counts", "local_update", "assemble_dot", "prefix_sum", "dual_fill", "dual_sum"},
             "kernels left by --include/--exclude")
kc.expect_eq({e["name"] for e in kc.events(doc, "kokkos.region")}, {"solve", "assemble"}, "regions left by --include")

# --events=none records nothing but still writes valid files.
wd = kc.workdir()
tool_run(f"--output={wd}/n --quiet --format=chrome --events=none")
with open(f"{wd}/n.trace.json") as f:
    doc = kc.json_load(f)
kc.expect_eq([e for e in doc["traceEvents"] if e.get("ph") != "M"], [], "--events=none records no event")

# Environment: KOB_ARGS and KOKKOS_TOOLS_ARGS are read; the command line wins.
wd = kc.workdir()
tool_run(f"--output={wd}/cmd", env={"KOB_ARGS": f"--output={wd}/env --quiet --format=json"})
kc.expect_eq(sorted(os.listdir(wd)), ["cmd.kob", "cmd.summary.json"], "command-line --output wins (the raw trace moves there), KOB_ARGS --format applies")
wd = kc.workdir()
tool_run(None, env={"KOKKOS_TOOLS_ARGS": f"--output={wd}/kta --quiet --format=chrome"})
kc.expect_eq(sorted(os.listdir(wd)), ["kta.kob", "kta.trace.json"], "KOKKOS_TOOLS_ARGS is read")

# Default prefix: kob-<executable>-<pid> in the working directory.
wd = kc.workdir()
tool_run(None, env={"KOB_ARGS": "--quiet"}, cwd=wd)
made = glob.glob(os.path.join(wd, f"kob-{os.path.basename(prog)}-*.pftrace"))
kc.expect_eq(len(made), 1, "default output prefix kob-<exe>-<pid>")

# --help prints every option with its default.
err = tool_run("--help --quiet --format=none")
for opt in ("--output=PREFIX", "--format=LIST", "--events=LIST", "--include=REGEX", "--exclude=REGEX", "--quiet",
            "--log-level=LEVEL", "--help", "--memory-limit=MIB", "--exact-kernel-end", "--jobs=N"):
    kc.check(opt in err, f"--help lists {opt}")
kc.check(err.count("(default:") >= 10, "--help shows defaults")

kc.finish()
