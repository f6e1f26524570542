"""The README's Python analyses of a run's database, run as written: takes the ```python block of
README.md that starts with `import sqlite3, pandas`, runs it (Debian's python3 with python3-pandas)
on the database of a run of a sample (--format=sqlite,json, loaded through the environment) and
checks what it computes against the same run's summary.json: calls per kernel, barrier waits per
kernel, lock waits per kind; then the counts a script would read the same way: parallel regions,
tasks, holds, bytes copied."""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--readme", required=True)
a = ap.parse_args()

try:
    import pandas as pd
except ImportError:
    print("SKIP: no pandas in this python (Debian's python3-pandas: run with /usr/bin/python3)")
    sys.exit(77)

text = open(a.readme, encoding="utf-8").read()
blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "import sqlite3, pandas" in b]
kc.expect_eq(len(blocks), 1, "the README has one Python analysis block")
code = "\n".join(line[2:] if line.startswith("  ") else line for line in blocks[0].splitlines()) if blocks else ""

lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "run")
env = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false", "KOKKOS_PROFILE_LIBRARY": lib, "KOKKOS_TOOLS_LIBS": lib,
       "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet --format=sqlite,json"}
rc, _, err = kc.run([os.path.abspath(a.program)], env, cwd=wd)
kc.expect_eq(rc, 0, f"program exit status ({err.strip()[-300:]})")
s = kc.json_load(open(prefix + ".summary.json"))
scope = {"db_path": prefix + ".sqlite"}
exec(compile(code, "README.md (python)", "exec"), scope)

kernel_times, barrier_wait, lock_waits = scope["kernel_times"], scope["barrier_wait"], scope["lock_waits"]
calls = {}
for k in s["kernels"]:
    calls[k["name"]] = calls.get(k["name"], 0) + k["calls"]
kc.expect_eq({n: int(c) for n, c in kernel_times["count"].items()}, calls, "1. kernel time distribution: calls per kernel")
kc.check(all(kernel_times["min"] <= kernel_times["50%"]) and all(kernel_times["50%"] <= kernel_times["max"]), "percentiles in order")
omp_wait = {}
for k in s["openmp"]["kernels"]:
    omp_wait[k["name"]] = omp_wait.get(k["name"], 0) + k["wait_ns"]
got_wait = {r.name: int(r.wait_ns) for r in barrier_wait.itertuples()}
kc.expect_eq(got_wait, {n: w for n, w in omp_wait.items() if n in got_wait}, "2. barrier wait per kernel = summary's OpenMP per-kernel wait")
kc.check(len(got_wait) > 0, "2. some kernels waited at barriers")
by_kind = lock_waits.groupby("kind")["wait_ns"].sum().to_dict() if len(lock_waits) else {}
kc.expect_eq({k: int(v) for k, v in by_kind.items()}, {k: m["wait_ns"] for k, m in s["openmp"]["mutex"].items() if m["wait_ns"] or k in by_kind},
             "3. lock waits per kind = summary's mutex waits")

db = scope["db"]
o = s["openmp"]
for what, sql, want in [
        ("parallel regions", "SELECT count(*) AS n FROM omp_parallel WHERE hidden_helper = 0", o["parallel_regions"]),
        ("tasks created", "SELECT count(*) AS n FROM omp_task_creates", o["tasks"]["created"]),
        ("holds", "SELECT count(*) AS n FROM omp_mutex WHERE phase = 'hold' AND nested = 0", sum(m["holds"] for m in o["mutex"].values())),
        ("bytes copied", "SELECT coalesce(sum(bytes), 0) AS n FROM deep_copies", sum(c["bytes"] for c in s["deep_copies"]))]:
    kc.expect_eq(int(pd.read_sql(sql, db)["n"][0]), want, f"pandas reads {what} as summary.json counts them")
kc.finish()
