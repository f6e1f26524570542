"""--format=sqlite: a run as a SQLite database (PREFIX.sqlite). Runs a program with the library
loaded through the environment (--format=sqlite,json), opens the database with Python's sqlite3
and checks it against the same run's summary.json: every table's row count (kernels, regions,
fences, deep copies and their bytes, allocations, parallel regions, implicit and initial tasks,
task creates and runs, mutex holds per kind, work and sync per kind), the runs and threads rows,
the foreign keys (tracks, code addresses), the flows (every OpenMP row's kernel id is a kernel
of the run) and SQLite's own integrity check. Then `kob convert RUN.kob --to=sqlite` must give
the same rows."""
import argparse
import json
import os
import sqlite3
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--threads", default="2")
a = ap.parse_args()

lib = os.path.abspath(a.lib)
wd = kc.workdir()
prefix = os.path.join(wd, "run")
env = {"OMP_NUM_THREADS": a.threads, "OMP_PROC_BIND": "false", "KOKKOS_PROFILE_LIBRARY": lib, "KOKKOS_TOOLS_LIBS": lib,
       "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": f"--output={prefix} --quiet --format=sqlite,json"}
rc, _, err = kc.run([os.path.abspath(a.program)], env, cwd=wd)
kc.expect_eq(rc, 0, f"program exit status ({err.strip()[-300:]})")
kc.check(os.path.exists(prefix + ".sqlite"), "PREFIX.sqlite written")
kc.expect_eq(sorted(f for f in os.listdir(wd) if f.startswith("run.")), ["run.kob", "run.sqlite", "run.summary.json"],
             "the files asked for, no temporary left")
with open(prefix + ".summary.json") as f:
    s = kc.json_load(f)
db = sqlite3.connect(prefix + ".sqlite")


def one(sql):
    return db.execute(sql).fetchone()[0]


kc.expect_eq(one("PRAGMA integrity_check"), "ok", "SQLite's integrity check")
kc.expect_eq(db.execute("PRAGMA foreign_key_check").fetchall(), [], "every track and code address a row refers to exists")

# The run and its threads.
run = db.execute("SELECT pid, program, run_time_ns, dropped_events FROM runs").fetchall()
kc.expect_eq(run, [(s["otherData"]["pid"], os.path.basename(a.program), s["run_time_ns"], s["dropped_events"])], "one runs row")
threads = db.execute("SELECT track, os_tid FROM threads ORDER BY track").fetchall()
kc.check(len(threads) >= len(s["openmp"]["threads"]) > 0, f"a threads row per track ({threads})")
kc.check(f"--output={prefix}" in one("SELECT options FROM runs"), "runs.options: the tool options as given")
omp_threads = {(t["track"], t["os_tid"], t["type"]) for t in s["openmp"]["threads"]}
kc.expect_eq({r for r in db.execute("SELECT track, os_tid, omp_thread_type FROM threads")
              if r[2] in ("initial", "worker", "other")}, omp_threads, "the OpenMP threads with their type")

# Kokkos: every call a row.
def by(sql):
    return Counter(dict(db.execute(sql).fetchall()))


kc.expect_eq(by("SELECT name || ' ' || kind, count(*) FROM kernels GROUP BY 1"),
             Counter({k["name"] + " " + k["kind"]: k["calls"] for k in s["kernels"]}), "kernels: a row per call, by name and kind")
kc.expect_eq(one("SELECT coalesce(sum(dur_ns), 0) FROM kernels"), sum(k["total_ns"] for k in s["kernels"]), "kernels: total time")
kc.expect_eq(by("SELECT path, count(*) FROM regions GROUP BY path"), Counter({r["path"]: r["calls"] for r in s["regions"]}),
             "regions: a row per entry, by path")
kc.expect_eq(by("SELECT name, count(*) FROM fences GROUP BY name"), Counter({f["name"]: f["calls"] for f in s["fences"]}),
             "fences: a row per call")
kc.expect_eq(by("SELECT name, count(*) FROM sections GROUP BY name"), Counter({x["name"]: x["intervals"] for x in s["sections"]}),
             "sections: a row per interval")
kc.expect_eq(by("SELECT call, count(*) FROM mpi_calls GROUP BY call"), Counter({x["name"]: x["calls"] for x in s["mpi_calls"]}),
             "MPI calls per function")
kc.expect_eq(one("SELECT count(*) FROM deep_copies"), sum(c["calls"] for c in s["deep_copies"]), "deep copies: a row per copy")
kc.expect_eq(one("SELECT coalesce(sum(bytes), 0) FROM deep_copies"), sum(c["bytes"] for c in s["deep_copies"]), "deep copies: bytes")
kc.expect_eq(by("SELECT space, count(*) FROM memory WHERE event = 'alloc' GROUP BY space"),
             Counter({m["space"]: m["allocations"] for m in s["memory"] if m["allocations"]}), "allocations per space")
kc.expect_eq(by("SELECT space, count(*) FROM memory WHERE event = 'dealloc' GROUP BY space"),
             Counter({m["space"]: m["deallocations"] for m in s["memory"] if m["deallocations"]}), "deallocations per space")

# OpenMP: every region, task, construct and lock a row.
o = s["openmp"]
kc.expect_eq(one("SELECT count(*) FROM omp_parallel WHERE hidden_helper = 0"), o["parallel_regions"], "parallel regions")
kc.expect_eq(one("SELECT count(*) FROM omp_implicit_tasks WHERE initial = 0"), o["implicit_tasks"], "implicit tasks")
kc.expect_eq(one("SELECT count(*) FROM omp_implicit_tasks WHERE initial = 1"), o["initial_tasks"], "initial tasks")
kc.expect_eq(by("SELECT type, count(*) FROM omp_work GROUP BY type"), Counter(o["work"]), "work constructs per type")
kc.expect_eq(by("SELECT kind, count(*) FROM omp_sync GROUP BY kind"), Counter(o["sync"]), "sync regions per kind")
kc.expect_eq(by("SELECT kind, sum(wait_ns) FROM omp_sync GROUP BY kind"), Counter(o["sync_wait_ns"]), "sync waits per kind")
kc.expect_eq(one("SELECT count(*) FROM omp_task_creates"), o["tasks"]["created"], "tasks created")
kc.expect_eq(one("SELECT count(*) FROM omp_tasks"), o["tasks"]["stretches"], "task stretches")
kc.expect_eq(by("SELECT kind, count(*) FROM omp_mutex WHERE phase = 'hold' AND nested = 0 GROUP BY kind"),
             Counter({k: m["holds"] for k, m in o["mutex"].items() if m["holds"]}), "mutex holds per kind")
kc.expect_eq(one("SELECT count(*) FROM flows f LEFT JOIN kernels k ON k.rank = f.rank AND k.id = f.kernel_id WHERE k.id IS NULL"), 0,
             "every OpenMP row's kernel id is a kernel of the run")
kc.expect_eq(one("SELECT count(*) FROM flows WHERE kind = 'omp_parallel'"),
             sum(k["parallel_regions"] for k in o["kernels"]), "flows: the parallel regions Kokkos kernels caused")
kc.expect_eq(one("SELECT count(*) FROM findings"), len(s["findings"]), "a findings row per finding")

# The instants: Kokkos profile events and DualView marks, OpenMP dispatches, dependences, locks'
# lives, cancels, flushes, errors.
kc.expect_eq(one("SELECT count(*) FROM kokkos_events WHERE kind = 'profile_event'"), s["profile_events"], "Kokkos profile events")
kc.expect_eq((one("SELECT count(*) FROM kokkos_events WHERE kind = 'dual_view' AND modify = 0"),
              one("SELECT count(*) FROM kokkos_events WHERE kind = 'dual_view' AND modify = 1")),
             (s["dual_view_syncs"], s["dual_view_modifies"]), "DualView syncs and modifies")
kc.expect_eq(by("SELECT name, count(*) FROM omp_instants WHERE kind = 'dispatch' GROUP BY name"), Counter(o["dispatch"]),
             "dispatches per kind")
kc.expect_eq((one("SELECT count(*) FROM omp_instants WHERE kind = 'dependences'"),
              one("SELECT coalesce(sum(value), 0) FROM omp_instants WHERE kind = 'dependences'"),
              one("SELECT count(*) FROM omp_instants WHERE kind = 'task_dependence'")),
             (o["tasks_with_dependences"], o["dependences"], o["task_dependences"]), "tasks with dependences, dependences, task dependences")
kc.expect_eq(tuple(one(f"SELECT count(*) FROM omp_instants WHERE kind = '{k}'") for k in ("lock_init", "lock_destroy", "cancel", "flush")),
             (o["lock_inits"], o["lock_destroys"], o["cancels"], o["flushes"]), "lock inits and destroys, cancels, flushes")
kc.expect_eq(by("SELECT name, count(*) FROM omp_instants WHERE kind = 'error' GROUP BY name"), +Counter(o["errors"]), "errors per severity")
kc.expect_eq(one("SELECT alignment FROM runs"), None, "a single run's database: no alignment")

# Target offload: regions per kind and device, data operations per kind with their bytes, submits.
t = s["target"]
want_regions, want_ops, want_bytes = Counter(), Counter(), Counter()
for d in t["devices"]:
    for kind, n in d["target_regions"].items():
        want_regions[(kind, d["device"])] += n
    for op, x in d["data_ops"].items():
        want_ops[op] += x["count"]
        want_bytes[op] += x["bytes"]
kc.expect_eq(Counter({(k, dev): n for k, dev, n in db.execute("SELECT kind, device, count(*) FROM omp_target GROUP BY 1, 2")}),
             want_regions, "target regions per kind and device")
kc.expect_eq(by("SELECT op, count(*) FROM omp_data_ops GROUP BY op"), want_ops, "target data operations per kind")
kc.expect_eq(by("SELECT op, sum(bytes) FROM omp_data_ops GROUP BY op"), +want_bytes, "target data operations' bytes per kind")
kc.expect_eq(one("SELECT count(*) FROM omp_submits"), sum(d["submits"] for d in t["devices"]), "target submits")
kc.check(one("SELECT count(*) FROM sources") == one(
    "SELECT count(*) FROM (SELECT source FROM omp_parallel UNION SELECT source FROM omp_work UNION SELECT source FROM omp_sync "
    "UNION SELECT source FROM omp_mutex UNION SELECT source FROM omp_task_creates UNION SELECT source FROM omp_target "
    "UNION SELECT source FROM omp_instants) "
    "WHERE source IS NOT NULL"), "a sources row per code address the rows name")

# kob convert of the raw trace: the same rows.
conv = os.path.join(wd, "conv")
rc, _, err = kc.run([a.kob, "convert", prefix + ".kob", "--to=sqlite", f"--output={conv}", "--quiet"])
kc.expect_eq(rc, 0, f"kob convert --to=sqlite exit status ({err.strip()})")
other = sqlite3.connect(conv + ".sqlite")
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
kc.check(len(tables) >= 20, f"the tables ({tables})")
for t in tables:
    kc.expect_eq(other.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall(), db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall(),
                 f"kob convert's {t} = the library's")

# kob sql: the query's rows as a table, CSV or JSON; SQLite's message for a bad query; the
# database made again from the raw trace when it is missing.
q = "SELECT kind, count(*) AS n FROM kernels GROUP BY kind ORDER BY kind"
want = db.execute(q).fetchall()
rc, out, err = kc.run([a.kob, "sql", prefix + ".sqlite", q, "--json"])
kc.expect_eq((rc, [(r["kind"], r["n"]) for r in kc.json_loads(out or "[]")]), (0, want), "kob sql --json")
rc, out, err = kc.run([a.kob, "sql", prefix + ".sqlite", q, "--csv"])
kc.expect_eq((rc, out.splitlines()), (0, ["kind,n"] + [f"{k},{n}" for k, n in want]), "kob sql --csv")
rc, out, err = kc.run([a.kob, "sql", prefix + ".sqlite", q])
kc.expect_eq((rc, [l.split() for l in out.splitlines()]), (0, [["kind", "n"]] + [[k, str(n)] for k, n in want]), "kob sql: a table")
rc, out, err = kc.run([a.kob, "sql", prefix + ".sqlite", "SELEC nothing"])
kc.expect_eq((rc, out, err.strip()), (1, "", 'kob: sql: near "SELEC": syntax error'), "kob sql: SQLite's message, exit 1")
# A raw trace cut short gives the database of what was recovered, as the other formats do; a
# database that cannot be written is one line, exit 1, and nothing under its name.
cut = os.path.join(wd, "cut.kob")
with open(prefix + ".kob", "rb") as f:
    data = f.read()
with open(cut, "wb") as f:
    f.write(data[:len(data) * 6 // 10])
rc, _, err = kc.run([a.kob, "convert", cut, "--to=sqlite,json", "--quiet"])
kc.check(rc in (0, 1), f"kob convert of a raw trace cut short: exit 0 or 1 ({rc}: {err.strip()[-200:]})")
if kc.check(os.path.exists(os.path.join(wd, "cut.sqlite")), "a cut raw trace still gives its database"):
    cs = kc.json_load(open(os.path.join(wd, "cut.summary.json")))
    cdb = sqlite3.connect(os.path.join(wd, "cut.sqlite"))
    kc.expect_eq(cdb.execute("SELECT count(*) FROM kernels").fetchone()[0], sum(k["calls"] for k in cs["kernels"]),
                 "the cut trace's database holds the kernels its summary counts")
    cdb.close()
taken = os.path.join(wd, "x.sqlite")  # a directory where the database would go
os.mkdir(taken)
rc, _, err = kc.run([a.kob, "convert", prefix + ".kob", "--to=sqlite", f"--output={os.path.join(wd, 'x')}"])
kc.expect_eq((rc, len(err.strip().splitlines())), (1, 1), f"an unwritable database: exit 1, one line ({err.strip()})")
kc.check("x.sqlite" in err, f"the line names the database ({err.strip()})")
kc.check(os.path.isdir(taken) and not os.listdir(taken), "what was under its name is as it was")
kc.expect_eq([n for n in os.listdir(wd) if n.startswith("x.sqlite.")], [], "no temporary database left")

# The canned reports, each against the summary.
def report(name):
    rc, out, err = kc.run([a.kob, "sql", "--report", name, prefix + ".sqlite", "--json"])
    kc.expect_eq(rc, 0, f"kob sql --report {name} ({err.strip()})")
    return kc.json_loads(out or "[]")


kc.expect_eq(sorted((r["name"], r["kind"], r["calls"], r["total_ns"]) for r in report("kernels")),
             sorted((k["name"], k["kind"], k["calls"], k["total_ns"]) for k in s["kernels"]), "report kernels = summary's kernels")
kc.expect_eq(sum(r["barriers"] for r in report("barriers")), sum(n for k, n in o["sync"].items() if k.startswith("barrier")),
             "report barriers: every barrier")
locks = Counter()
for r in report("locks"):
    locks[r["kind"]] += r["holds"]
kc.expect_eq(+locks, Counter({k: m["holds"] + m["nested_holds"] for k, m in o["mutex"].items() if m["holds"] + m["nested_holds"]}),
             "report locks: holds per kind")
kc.expect_eq(sorted((r["space"], r["allocations"], r["deallocations"], r["bytes_allocated"], r["high_water_bytes"]) for r in report("memory")),
             sorted((m["space"], m["allocations"], m["deallocations"], m["bytes_allocated"], m["high_water_bytes"]) for m in s["memory"]),
             "report memory = summary's memory spaces")
docs = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "sqlite.md"), encoding="utf-8").read()
for name in ("kernels", "barriers", "locks", "memory"):
    rc, out, _ = kc.run([a.kob, "sql", "--report", name])
    kc.check(rc == 0 and out.strip() in docs, f"docs/sqlite.md shows the {name} report's query as kob runs it")
rc, _, err = kc.run([a.kob, "sql", "--report", "nothing", prefix + ".sqlite"])
kc.expect_eq((rc, err.strip()), (2, "kob: sql: --report takes kernels, barriers, locks or memory, not 'nothing' (kob sql --help)"),
             "an unknown report: a usage error")
db.close()
os.unlink(prefix + ".sqlite")
rc, out, err = kc.run([a.kob, "sql", prefix, "SELECT count(*) AS n FROM kernels", "--json"])
kc.expect_eq((rc, kc.json_loads(out or "[{}]")[0].get("n")), (0, sum(k["calls"] for k in s["kernels"])),
             "kob sql RUN makes the database from the raw trace first")
kc.check(os.path.exists(prefix + ".sqlite"), "... and leaves it beside the raw trace")
kc.finish()
