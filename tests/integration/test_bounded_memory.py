"""Bounded memory: a Kokkos + OpenMP program (2 threads, both routes) records more than 10x
--memory-limit of 64-byte records, and the tool's added resident memory while it records stays
within the limit plus a fixed slack; nothing is dropped and every kernel is in the outputs.

The program prints its VmHWM (peak resident set) just before Kokkos::finalize; the tool writes
its files at the end of the run, so this is the recording phase. The tool's share is that peak
minus the peak of the same program run without the tool (same environment otherwise, sanitizer
runtime included). Without bounded memory every record would stay resident: 64 bytes each, over
20 MiB here, and the check would fail; the test asserts that this premise holds for the run it
makes. A second run with a tenth of the kernels shows the tool's share does not grow with the run.

The conversion is bounded too: `kob convert --to=perfetto,chrome,summary,json` (both traces and
both summaries, the code the library runs at exit; not otf2, which keeps the run's events by design) on both raw traces, with trace windows of 4096 spans, peaks at the same
resident memory for the long run as for the short one (read by the peak_rss runner), and the
traces hold every kernel, its parallel region and the arrow between them.

SLACK (what the tool has resident besides its ring slots, whatever the run length): its own code
and that of spdlog, fmt and RE2 as far as it is touched (the library is ~1.4 MiB of which a part
runs), the writer thread's stack and encoding buffer (511 records x 92 bytes at most, ~46 KiB),
the intern table, thread registry and per-thread state, and the malloc arenas of the threads it
starts (glibc gives the writer thread its own arena). Measured: ~1 MiB besides the 256 KiB of
slots the two threads take (release); with the sanitizers each allocation carries redzones and
shadow memory, and the instrumented code is ~3x larger: ~11 MiB. SLACK is 6 MiB (release),
16 MiB (sanitizers): well under the 24 MiB that per-record memory would add."""
import argparse
import json
import os
import struct

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--peak-rss", required=True, help="the peak_rss runner")
a = ap.parse_args()
prog, lib, kob = os.path.abspath(a.program), os.path.abspath(a.lib), os.path.abspath(a.kob)

LIMIT_MIB = 2
KERNELS = 40000          # ~10 records each on 2 threads (a barrier is one): ~400 k records, ~24 MiB of 64-byte records
MIN_RECORDS = 20 * (1 << 20) // 64  # the run must record at least 10x the limit (20 MiB)
MIB = 1 << 20
SLACK_MIB = 16 if kc.SANITIZER_PRELOAD else 6
# The tool's share may differ this much between a run and one 10x shorter (measured: 0.2 MiB; with
# the sanitizers 1.9 MiB, their allocator's regions filling while the first chunks go through,
# then 0.5 MiB more up to 100 k kernels). 64 bytes kept per record would make it 21 MiB.
# Measured again 2026-12-07: release -36 to +32 KiB; ASan+UBSan 3.0-4.2 MiB in six runs, the same
# with either summary engine (KOB_ENGINE=builder 3.6 MiB), and 4.1 MiB once in .ci/run, where
# bd5bdbb's code gave 2.5-3.0 MiB: both runs' shares fell (14.7-15.0 -> 13.4-14.5 MiB for 40,000
# kernels, 11.9-12.2 -> 10.4-10.7 for 4,000), the short run's more. 6 MiB keeps the sanitizers'
# allocator out of the verdict and still catches a record's 64 bytes.
GROWTH_MIB = 6 if kc.SANITIZER_PRELOAD else 2
# No sanitizer quarantine: the writer's few temporaries per chunk would look like growth.
ENV = {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false", **kc.NO_QUARANTINE}
TOOL_VARS = ("KOKKOS_PROFILE_LIBRARY", "OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOB_ARGS", "KOKKOS_TOOLS_ARGS")


def peak_kib(out, what):
    fields = dict(l.split(None, 1) for l in out.splitlines() if l.startswith("Vm"))
    kc.check("VmHWM" in fields, f"{what}: the program printed its VmHWM: {out!r}")
    return int(fields.get("VmHWM", "0"))


def raw_blocks(path):
    """The COMPACT record count and the META tags of a raw trace (docs/raw-format.md: blocks of a
    48-byte header from offset 4096; META payloads are entries u16 tag, u16 0, u32 length)."""
    with open(path, "rb") as f:
        data = f.read()
    records, tags, off = 0, [], 4096
    while off + 48 <= len(data):
        magic, kind, _flags, _thread, payload, _seq, n = struct.unpack_from("<IHHIIQI", data, off)
        if magic != 0x4B4C424B or off + 48 + payload > len(data):
            break
        if kind == 1:
            records += n
        elif kind == 3:
            at = off + 48
            while at + 8 <= off + 48 + payload:
                tag, _zero, length = struct.unpack_from("<HHI", data, at)
                tags.append(tag)
                at += 8 + length
        off += (48 + payload + 7) & ~7
    return records, tags


def run_with_tool(kernels):
    wd = kc.workdir()
    prefix = os.path.join(wd, "mem")
    env = dict(ENV, KOKKOS_PROFILE_LIBRARY=lib, OMP_TOOL_LIBRARIES=lib,
               KOB_ARGS=f"--memory-limit={LIMIT_MIB} --output={prefix} --quiet --format=summary,json")
    rc, out, err = kc.run([prog, str(kernels)], env, cwd=wd, unset=TOOL_VARS)
    kc.expect_eq(rc, 0, f"{kernels} kernels with the tool: exit code")
    return prefix, out, err


def run_without_tool(kernels):
    rc, out, _ = kc.run([prog, str(kernels)], ENV, cwd=kc.workdir(), unset=TOOL_VARS)
    kc.expect_eq(rc, 0, f"{kernels} kernels without the tool: exit code")
    return out


def first_line(out):
    return out.splitlines()[0] if out else ""


def convert_peak_kib(raw, out):
    """kob convert to every format with small trace windows: its peak RSS (KiB), read by peak_rss."""
    peak = kc.peak_rss_kib(a.peak_rss, [kob, "convert", raw, f"--output={out}", "--to=perfetto,chrome,summary,json", "--quiet",
                                        f"--trace-window={WINDOW}"], ENV, "kob convert --to=perfetto,chrome,summary,json")
    return peak or 0


WINDOW = 4096  # spans per trace window: a few hundred KiB, against ~40 MiB for the whole long run

shares, prefixes = {}, {}
for kernels in (KERNELS, KERNELS // 10):
    base = run_without_tool(kernels)
    prefix, out, err = run_with_tool(kernels)
    kc.expect_eq(first_line(out), first_line(base), f"{kernels} kernels: stdout as without the tool")
    shares[kernels] = peak_kib(out, f"{kernels} kernels, tool") - peak_kib(base, f"{kernels} kernels, no tool")
    prefixes[kernels] = prefix
    print(f"{kernels} kernels: peak RSS without the tool {peak_kib(base, '')} KiB, with it {peak_kib(out, '')} KiB, "
          f"the tool's share {shares[kernels]} KiB")

    # Nothing dropped, every kernel there, the raw trace complete.
    with open(prefix + ".summary.json") as f:
        summary = kc.json_load(f)
    kc.expect_eq((summary["dropped_events"], summary["coverage"]["complete"], summary["coverage"]["lost"]),
                 (0, True, []), f"{kernels} kernels: nothing dropped")
    calls = {k["name"]: k["calls"] for k in summary["kernels"]}
    kc.expect_eq(calls.get("tiny"), kernels, f"{kernels} kernels: every kernel in the summary")
    omp_rows = {k["name"]: k for k in summary["openmp"]["kernels"]}
    kc.expect_eq((omp_rows.get("tiny", {}).get("parallel_regions"), omp_rows.get("tiny", {}).get("mean_team_size")),
                 (kernels, 2), f"{kernels} kernels: one parallel region of 2 threads per kernel")
    kc.check("events lost" not in err and "dropped" not in err, f"{kernels} kernels: no drop line: {err!r}")
    records, tags = raw_blocks(prefix + ".kob")
    kc.expect_eq((tags.count(5), tags.count(6)), (0, 1), f"{kernels} kernels: raw trace: no LOST entry, one END")
    if kernels == KERNELS:
        print(f"{kernels} kernels: {records} records in the raw trace ({records * 64 / MIB:.1f} MiB as 64-byte records)")
        kc.check(records >= MIN_RECORDS, f"the run records at least 10x --memory-limit of 64-byte records: {records}")
        # Issue 18: a kernel on 2 threads is 10 records (each thread's barrier folded into one):
        # kernel begin/end, parallel begin/end, and per thread implicit task begin/end and a barrier.
        # The chunks a thread copied itself (the writer had no core) each open with a flush record.
        flushes = summary["tool"]["flushes"]
        kc.check(records - flushes <= 10 * kernels + 100,
                 f"at most 10 raw records per 2-thread kernel: {records} ({flushes} of them flushes) for {kernels}")
        # The premise: per-record memory would break the bound this test checks.
        kc.check(records * 64 > (LIMIT_MIB + SLACK_MIB) * MIB,
                 f"{records} records of 64 bytes would exceed limit + slack: the check can fail")
        # The converter finds them all too.
        conv = os.path.join(os.path.dirname(prefix), "conv")
        rc, _, cerr = kc.run([kob, "convert", prefix + ".kob", f"--output={conv}", "--to=json", "--quiet"])
        kc.expect_eq(rc, 0, f"kob convert ({cerr.strip()})")
        if os.path.exists(conv + ".summary.json"):
            with open(conv + ".summary.json") as f:
                kc.expect_eq(kc.json_load(f), summary, "kob convert's summary.json equals the library's")

big, small = shares[KERNELS], shares[KERNELS // 10]
kc.check(big <= (LIMIT_MIB + SLACK_MIB) * 1024,
         f"the tool's added peak RSS while recording ({big} KiB) stays within --memory-limit={LIMIT_MIB} MiB + {SLACK_MIB} MiB")
# 64 bytes per record kept would make the long run's share 0.9 x 24 MiB larger than the short one's.
kc.check(big - small <= GROWTH_MIB * 1024,
         f"the tool's share does not grow with the run: {small} KiB for {KERNELS // 10} kernels, {big} KiB for {KERNELS}")

# The conversion (what the library does at exit, and kob convert) in bounded memory too: both traces
# and both summaries of the long run take no more memory than those of the run 10x shorter, while
# keeping the long run's spans (~200 k) would take tens of MiB. Every kernel is in both traces.
conv_peak, outs = {}, {}
for kernels in (KERNELS, KERNELS // 10):
    outs[kernels] = os.path.join(os.path.dirname(prefixes[kernels]), "all")
    conv_peak[kernels] = convert_peak_kib(prefixes[kernels] + ".kob", outs[kernels])
for kernels in (KERNELS, KERNELS // 10):
    with open(outs[kernels] + ".trace.json") as f:
        doc = kc.json_load(f)
    tiny = [e for e in kc.events(doc, "kokkos.kernel", "X") if e["name"] == "tiny"]
    kc.expect_eq(len(tiny), kernels, f"{kernels} kernels: kernels in the Chrome trace")
    ids = {e["args"]["id"] for e in tiny}
    kc.expect_eq(sum(1 for e in kc.events(doc, "omp.parallel", "X") if e["args"].get("kokkos_kernel") in ids), kernels,
                 f"{kernels} kernels: a parallel region per kernel")
    flows = sum(1 for e in doc["traceEvents"] if e["ph"] == "f" and e["name"] == "parallel")
    kc.expect_eq(flows, len(kc.events(doc, "kokkos.kernel", "X")), f"{kernels} kernels: an arrow from each kernel to its parallel region")
    spans = sum(1 for e in doc["traceEvents"] if e["ph"] == "X")
    print(f"{kernels} kernels: kob convert (streaming formats): {spans} spans, peak RSS {conv_peak[kernels]} KiB")
    if kernels == KERNELS:
        # The premise: the spans kept whole (at least 64 bytes each in memory) would show.
        kc.check(spans * 64 > 2 * GROWTH_MIB * MIB, f"{spans} spans kept whole would exceed the growth allowed 2x over")
    del doc
kc.check(conv_peak[KERNELS] - conv_peak[KERNELS // 10] <= GROWTH_MIB * 1024,
         f"kob convert's peak RSS does not grow with the run: {conv_peak[KERNELS // 10]} KiB for {KERNELS // 10} kernels, "
         f"{conv_peak[KERNELS]} KiB for {KERNELS}")
kc.finish()
