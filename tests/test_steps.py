"""scripts/steps.sh, the set-up scripts' steps: a step names itself and its time, a build's [n/m]
lines show every 10 % when the output is no terminal, the command's report lists every step's
time, and a failed step ends with one line naming it and its log, with status 1."""
import os
import re
import subprocess
import sys
import tempfile

steps = os.path.join(sys.argv[1], "scripts", "steps.sh")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def bash(script, env=None):
    full = {k: v for k, v in os.environ.items() if k != "KOB_STEPS_LOG"}
    full.update(env or {})
    return subprocess.run(["bash", "-c", f'. "{steps}"\n' + script], capture_output=True, text=True, env=full, timeout=60)


with tempfile.TemporaryDirectory() as wd:
    log = os.path.join(wd, "out.log")
    # A step that works: its name when it starts, its time when it ends; its output in the log only.
    r = bash(f'run_step "making things" "{log}" sh -c "echo made"')
    check(r.returncode == 0, f"a step that works: status 0 ({r.returncode})")
    check(r.stdout.splitlines()[0] == "==> making things", f"its name first: {r.stdout!r}")
    check(re.fullmatch(r"    making things: done in \d+ s", r.stdout.splitlines()[1]) is not None, f"then its time: {r.stdout!r}")
    check("made" not in r.stdout and open(log).read() == "made\n", "its output in the log, not on the screen")

    # A build: 20 [n/20] lines shown at 0, 10, ..., 100 % (11 lines), every line kept in the log.
    blog = os.path.join(wd, "build.log")
    lines = "; ".join(f"echo '[{i}/20] step {i}'" for i in range(1, 21))
    r = bash(f'build_step "building" "{blog}" sh -c "{lines}"')
    shown = [l for l in r.stdout.splitlines() if l.startswith("    [")]
    check(r.returncode == 0, "a build that works: status 0")
    check([int(re.search(r"(\d+) %", l).group(1)) // 10 for l in shown] == list(range(11)), f"a line every 10 %: {shown}")
    check(len(open(blog).read().splitlines()) == 20, "every build line in its log")

    # A failed step: the log's last lines, then one line naming the step and the log; status 1; the
    # script goes no further.
    flog = os.path.join(wd, "fail.log")
    r = bash(f'run_step "a failing step" "{flog}" sh -c "echo the reason; exit 3"; echo went-on')
    check(r.returncode == 1, f"a failed step: status 1 ({r.returncode})")
    check("went-on" not in r.stdout, "the script stops at a failed step")
    err = r.stderr.splitlines()
    check(err[-1] == f"FAILED: a failing step (its output: {flog})", f"its last line names the step and the log: {err}")
    check("the reason" in err, f"the log's last lines before it: {err}")
    r = bash(f'build_step "a failing build" "{flog}" sh -c "echo [1/1] x; exit 2"; echo went-on')
    check(r.returncode == 1 and "went-on" not in r.stdout and r.stderr.splitlines()[-1].startswith("FAILED: a failing build"),
          f"a failed build: status 1 and the line: {r.stderr!r}")

    # The report: the command that began the list prints every step's time, also those of the
    # scripts it ran (which append to the same list), and the whole.
    os.makedirs(os.path.join(wd, "build"), exist_ok=True)
    inner = os.path.join(wd, "inner.sh")
    with open(inner, "w") as f:
        f.write(f'. "{steps}"\nsteps_begin\nrun_step "inner step" "{log}" true\nsteps_report\n')
    r = subprocess.run(["bash", "-c", f'cd "{wd}"; . "{steps}"; steps_begin; run_step "outer step" "{log}" true; bash "{inner}"; steps_report'],
                       capture_output=True, text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "KOB_STEPS_LOG"})
    tail = r.stdout.split("time taken:")
    check(len(tail) == 2, f"one report, by the command that began the list: {r.stdout!r}")
    if len(tail) == 2:
        names = [l.split("  ")[-1].strip() for l in tail[1].strip().splitlines()]
        check(names == ["outer step", "inner step", "in all"], f"every step's time and the whole: {names}")

print("all checks passed" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)
