"""Kokkos tools side by side (kokkos_hooks/kokkos_chain): samples/kokkos_sample (OpenMP backend, 2
threads) with count_tool (an independent counting tool that counts every hook) run beside this
library by each route: the entry after ours in KOKKOS_PROFILE_LIBRARY (kokkos-tools' convention),
--chain in KOB_ARGS, --chain on the command line (--kokkos-tools-args, known only at parse_args), and
kob run --chain. In each, every count of count_tool equals its solo run's (but its load sequence, 1,
and its parse_args words, the --chain-arg ones), this library's summary counts the same Kokkos
hooks as its own solo run, and the program's stdout and exit code are those of the program alone.
Then this library as the child of a parent that follows kokkos-tools' convention (chain_parent):
its summary equal to its solo run's. Then children that cannot run: a missing file, a library
without kokkosp_ hooks, a tool that crashes in kokkosp_init_library: one line each, and the run
goes on as with this library alone."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--count-tool", required=True)
ap.add_argument("--parent", required=True)
ap.add_argument("--crash-tool", required=True)
a = ap.parse_args()
program, lib, kob, count, parent, crash = (os.path.abspath(p) for p in (a.program, a.lib, a.kob, a.count_tool, a.parent, a.crash_tool))

wd = kc.workdir()
UNSET = ("KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS", "KOB_ARGS", "KOKKOS_TOOLS_ARGS", "OMP_TOOL_LIBRARIES")
BASE = {"OMP_NUM_THREADS": "2", "KMP_BLOCKTIME": "0"}


def run(name, cmd, env):
    """Runs the program; its exit code, stdout, stderr lines, and count_tool's counts if it wrote them."""
    out = os.path.join(wd, name + ".count.json")
    rc, stdout, stderr = kc.run(cmd, {**BASE, "COUNT_TOOL_OUT": out, **env}, cwd=wd, unset=UNSET)
    counts = kc.load_json(out) if os.path.exists(out) else None
    return rc, stdout, stderr.splitlines(), counts


def ours(name, extra=""):
    prefix = os.path.join(wd, name)
    return prefix, f"--output={prefix} --quiet --format=summary,json {extra}".strip()


# The program alone, count_tool alone, this library alone.
base_rc, base_out, _, _ = run("alone", [program], {})
kc.expect_eq(base_rc, 0, "the program's exit code alone")
rc, out, _, solo_count = run("count-solo", [program], {"KOKKOS_PROFILE_LIBRARY": count})
kc.expect_eq((rc, out), (base_rc, base_out), "exit code and stdout with count_tool alone")
kc.check(solo_count is not None, "count_tool alone wrote its counts")
solo_prefix, args = ours("solo")
rc, out, _, _ = run("solo", [program], {"KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
kc.expect_eq((rc, out), (base_rc, base_out), "exit code and stdout with this library alone")
solo = kc.kokkos_counts(kc.load_json(solo_prefix + ".summary.json"))
kc.expect_eq(solo, kc.count_tool_counts(solo_count), "this library alone counts what count_tool alone counts")
kc.expect_eq(solo_count["load_seq"], 0, "count_tool alone: load sequence 0")
kc.check(solo_count["sections"].get("start phase_A") == 2 and solo_count["profile_events"].get("iteration_done") == 3 and
         solo_count["dual_view_modifies"] == 2 and solo_count["fence_ends"] == 3 and solo_count["kernels_open"] == 0,
         f"count_tool alone saw the sample's sections, events, dual views and fence ends: {solo_count}")


def expect_chained(what, rc, out, err, count, prefix, words):
    kc.expect_eq((rc, out), (base_rc, base_out), f"{what}: exit code and stdout")
    if not kc.check(count is not None, f"{what}: count_tool wrote its counts (stderr: {err[-5:]})"):
        return
    for key, want in solo_count.items():
        if key == "load_seq":
            want = 1  # started by this library, kokkos-tools' way
        elif key == "parse_args":
            want = words
        kc.expect_eq(count.get(key), want, f"{what}: count_tool's {key}")
    summary = kc.load_json(prefix + ".summary.json")
    kc.expect_eq(kc.kokkos_counts(summary), solo, f"{what}: this library's summary counts as alone")
    kc.expect_eq(summary["dropped_events"], 0, f"{what}: nothing dropped")
    kc.check(not any("chained" in l for l in err), f"{what}: no line about the chained tool: {err}")


# 1. kokkos-tools' convention: the entry after ours; --chain-arg words for its parse_args.
prefix, args = ours("list", "--chain-arg=--verbose --chain-arg=2")
rc, out, err, c = run("list", [program], {"KOKKOS_PROFILE_LIBRARY": f"{lib};{count}", "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
expect_chained("KOKKOS_PROFILE_LIBRARY=lib;count_tool", rc, out, err, c, prefix, ["--verbose", "2"])

# 2. --chain in KOB_ARGS: known when Kokkos starts the library.
prefix, args = ours("env", f"--chain={count}")
rc, out, err, c = run("env", [program], {"KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
expect_chained("KOB_ARGS=--chain=count_tool", rc, out, err, c, prefix, [])

# 3. --chain on the command line: known only at parse_args, after Kokkos took the settings.
prefix, args = ours("cmdline", f"--chain={count} --chain-arg=x")
rc, out, err, c = run("cmdline", [program, f"--kokkos-tools-library={lib}", f"--kokkos-tools-args={args}"], {"OMP_TOOL_LIBRARIES": lib})
expect_chained("--kokkos-tools-args=--chain=count_tool", rc, out, err, c, prefix, ["x"])

# 4. kob run --chain: the same set-up.
prefix, args = ours("kobrun")
rc, out, err, c = run("kobrun", [kob, "run", f"--output={prefix}", "--quiet", "--format=summary,json", f"--chain={count}", "--", program], {})
expect_chained("kob run --chain=count_tool", rc, out, err, c, prefix, [])

# 5. A chained tool that wants global fencing: Kokkos is asked for it (the union of both wishes).
prefix, args = ours("fencing", "--log-level=debug")
rc, out, err, c = run("fencing", [program], {"KOKKOS_PROFILE_LIBRARY": f"{lib};{count}", "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args,
                                              "COUNT_TOOL_FENCING": "1"})
kc.check(any("global fencing: yes" in l for l in err), f"a chained tool wanting global fencing: Kokkos asked for it: {err[:20]}")
prefix, args = ours("nofencing", "--log-level=debug")
rc, out, err, c = run("nofencing", [program], {"KOKKOS_PROFILE_LIBRARY": f"{lib};{count}", "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
kc.check(any("global fencing: no" in l for l in err), f"no one wanting global fencing: Kokkos not asked: {err[:20]}")

# 6. This library as the child of a parent that follows kokkos-tools' convention.
prefix, args = ours("child")
rc, out, err, _ = run("child", [program], {"KOKKOS_PROFILE_LIBRARY": f"{parent};{lib}", "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
kc.expect_eq((rc, out), (base_rc, base_out), "as chain_parent's child: exit code and stdout")
summary = kc.load_json(prefix + ".summary.json")
kc.expect_eq(kc.kokkos_counts(summary), solo, "as chain_parent's child: the summary counts as alone")
kc.expect_eq(summary["dropped_events"], 0, "as chain_parent's child: nothing dropped")

# 7. Children that cannot run: one line naming it, and the run goes on as with this library alone.
for name, child, line in (("missing", os.path.join(wd, "no-such-tool.so"), "cannot load the chained tool"),
                          ("nohooks", "libm.so.6", "has neither kokkosp_* hooks nor ompt_start_tool"),
                          ("crash", crash, "crashed (signal 11) in kokkosp_init_library")):
    prefix, args = ours(name, f"--chain={child}")
    rc, out, err, _ = run(name, [program], {"KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib, "KOB_ARGS": args})
    kc.expect_eq((rc, out), (base_rc, base_out), f"{name} child: exit code and stdout")
    said = [l for l in err if "chained" in l]
    kc.check(len(said) == 1 and line in said[0] and child in said[0], f"{name} child: one line naming it: {err}")
    kc.expect_eq(kc.kokkos_counts(kc.load_json(prefix + ".summary.json")), solo, f"{name} child: the summary counts as alone")
    kc.check(not any("crash_tool:" in l for l in err), f"{name} child: no hook of a dropped child called: {err}")

kc.finish()
