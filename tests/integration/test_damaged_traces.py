"""Damaged raw traces, by construction (issue 20, item 2). Real raw traces (the samples under the
library with --format=none, OMP_NUM_THREADS=2, and make_raw_trace's hand-written ones, which have
many COMPACT chunks spread over the file) are each damaged in one way per variant: cut at a random
offset, random bytes flipped, a 4 KiB block zeroed, garbage appended, a second trace appended, or a
count field (a block header's `records` or `payload`, a META entry's length, a KV string's length,
a NAME entry's id, up to which the name table grows) set to 2^32-1 or 2^31 (a LOST entry's u64 event count: 2^63). The variants are drawn from a seeded
random generator (the seed is printed; --seed repeats a run).

For each variant `kob convert --to=chrome,summary,json` (the timeline builder's path), and for the
bounds and exit status also `kob convert --to=summary,json` (the per-thread engine's), must
- end within 20 s (no hang) and not by a signal (no crash), with exit status 0 or 1, and 0 whenever
  the damage starts after the 4096-byte file header;
- stay within 2 GiB of address space (RLIMIT_AS; in a sanitizer build, whose shadow memory needs
  more, 1 GiB of peak RSS instead);
- write a few lines on stderr: at most 3 of kob's own and 12 in all (the timeline's warnings are
  one line per kind of problem); a line that names the damage says "damaged at byte R", and R never
  lies in the intact part of the file before the block where the damage starts (damage the original
  already has, make_raw_trace's crash file's cut tail, may be named too);
  a damage the reader can always tell (a cut inside a block, garbage or a second trace appended, a
  count field out of range) must be named, at R between that block's start and the damage;
- recover every event before the damage. Checkable form: the events of a reference file, converted
  by the same kob, are all in the damaged file's conversion, identified by what the records carry
  (kernel, fence and deep-copy ids; parallel region ids; implicit tasks by region and thread
  number; not names, times or thread ids, which META entries after the damage may change). The
  reference of a damage at byte X is the original file cut at X with its RING slots marked free:
  the COMPACT blocks (and META) that lie wholly before X. (A ring slot is a live copy the reader
  uses only when the file has no END; once END survives, the COMPACT copy later in the file is
  the record.) For a cut at X the reference keeps the ring slots before X too: a file cut short has
  no END, and the records its threads had committed there are part of the run. An event the
  reference's cut leaves open (its end lies after X: "cut", shown until the end) straddles the
  damage and is not checked: where a damaged block lost its end, the timeline discards it as
  dropped (seed 343065232, variant 397: a kernel whose end was in the flipped block).
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kob", required=True)
ap.add_argument("--maker", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--program", action="append", default=[], help="a sample to record (NAME=PATH)")
ap.add_argument("--variants", type=int, default=1000)
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--jobs", type=int, default=2)
args = ap.parse_args()

seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
print(f"seed {seed} (repeat with --seed={seed})", flush=True)
rng = random.Random(seed)
work = kc.workdir()
started = time.monotonic()

BLOCK_MAGIC = 0x4B4C424B
COMPACT, RING, META, PAD = 1, 2, 3, 4
SANITIZED = bool(kc.SANITIZER_PRELOAD)
TIME_LIMIT_S = 20
AS_LIMIT = 2 << 30
RSS_LIMIT_KIB = 1 << 20
# kob's own lines (the damage, a cut tail, no calibration point) and the timeline's warnings, one
# per kind of problem (a span never ended, an end without a begin, ...).
MAX_LINES = 12


# ---- the original traces ----------------------------------------------------------------------
def record_sample(name, program):
    prefix = os.path.join(work, name)
    lib = os.path.abspath(args.lib)
    env = {"OMP_NUM_THREADS": "2", "KOKKOS_PROFILE_LIBRARY": lib, "OMP_TOOL_LIBRARIES": lib,
           "KOB_ARGS": f"--output={prefix} --quiet --format=none"}
    rc, _, err = kc.run([os.path.abspath(program)], env, cwd=work)
    kc.expect_eq(rc, 0, f"{name}: exit status ({err.strip()[-300:]})")
    return prefix + ".kob"


def make_raw(name, n, mode):
    path = os.path.join(work, name + ".kob")
    rc, _, err = kc.run([args.maker, path, str(n), mode])
    kc.expect_eq(rc, 0, f"make_raw_trace {n} {mode}: exit status ({err})")
    return path


originals = [make_raw("raw_clean", 700, "clean"), make_raw("raw_lost", 300, "lost"), make_raw("raw_crash", 400, "crash")]
for spec in args.program:
    name, _, program = spec.partition("=")
    originals.append(record_sample(name, program))
originals = [p for p in originals if os.path.exists(p)]


def walk(data):
    """The blocks of a raw trace (docs/raw-format.md): (offset, end, kind, payload bytes)."""
    blocks, off = [], 4096
    while off + 48 <= len(data):
        magic, kind, _, _, payload = struct.unpack_from("<IHHII", data, off)
        end = off + 48 + payload
        if magic != BLOCK_MAGIC or end > len(data):
            break
        blocks.append((off, end, kind, payload))
        off = (end + 7) & ~7
    return blocks


def count_fields(data, blocks):
    """Where the count fields are: (offset, size, what)."""
    fields = []
    for off, end, kind, payload in blocks:
        fields.append((off + 12, 4, "payload"))
        if kind == COMPACT:
            fields.append((off + 24, 4, "records"))
        if kind != META:
            continue
        p = off + 48
        while end - p >= 8:
            tag, _, length = struct.unpack_from("<HHI", data, p)
            fields.append((p + 4, 4, "meta entry length"))
            if tag == 3:  # KV: three strings
                s = p + 8
                for _ in range(3):
                    if s + 4 > p + 8 + length:
                        break
                    fields.append((s, 4, "string length"))
                    s += 4 + struct.unpack_from("<I", data, s)[0]
            if tag == 1 and length >= 4:  # NAME: the id, which the name table grows to
                fields.append((p + 8, 4, "name id"))
            if tag == 5 and length >= 32:  # LOST: u64 events
                fields.append((p + 8 + 24, 8, "lost events"))
            p += 8 + length
    return fields


# ---- running kob convert, bounded -------------------------------------------------------------
def limit_memory():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def convert(path, out_prefix, to="chrome,summary,json"):
    """kob convert, bounded in time and memory: (status, stderr lines, peak RSS KiB, outcome)."""
    env = kc.program_env()
    with open(out_prefix + ".stderr", "w+b") as err:
        p = subprocess.Popen([args.kob, "convert", path, f"--to={to}", f"--output={out_prefix}", "--quiet"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
                             preexec_fn=limit_memory)
        deadline = time.monotonic() + TIME_LIMIT_S
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                p.kill()
                _, status, usage = os.wait4(p.pid, 0)
                p.returncode = -9
                return None, [], usage.ru_maxrss, "hang"
            time.sleep(0.005)
        p.returncode = 0  # reaped here; keeps Popen from waiting again
        err.seek(0)
        raw = err.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            # A damaged trace's names and paths reach kob's messages escaped, never as raw bytes.
            kc.check(False, f"{path}: kob's messages are text ({e}: {raw[max(0, e.start - 60):e.start + 20]!r})")
            text = raw.decode("utf-8", "replace")
        lines = [l for l in kc.without_sanitizer_notes(text.splitlines()) if l.strip()]
    kc.check_no_sanitizer_report("\n".join(lines), "kob convert " + path)
    if os.WIFSIGNALED(status):
        return None, lines, usage.ru_maxrss, f"signal {os.WTERMSIG(status)}"
    return os.WEXITSTATUS(status), lines, usage.ru_maxrss, "exit"


ID_CATEGORIES = ["kokkos.kernel", "kokkos.fence", "kokkos.deep_copy", "omp.parallel", "omp.implicit_task"]


def identities(out_prefix, whole_only=False):
    """What the records carry, per event: not names, times or thread ids. whole_only (a reference):
    not the events its cut left open ("cut": shown until the end), which straddle the damage."""
    try:
        with open(out_prefix + ".trace.json") as f:
            events = kc.json_load(f)["traceEvents"]
    except (OSError, ValueError):
        return set()
    ids = set()  # one int each: this process stays small (see make_variant)
    for e in events:
        a, cat = e.get("args") or {}, e.get("cat")
        if e.get("ph") != "X" or cat not in ID_CATEGORIES or (whole_only and a.get("cut")):
            continue
        key = a.get("parallel_id") if cat.startswith("omp.") else a.get("id")
        if not isinstance(key, int) or (cat == "omp.implicit_task" and key == 1):  # 1: the initial task
            continue
        sub = a.get("thread_num", 0) if cat == "omp.implicit_task" else 0
        ids.add((ID_CATEGORIES.index(cat) << 96) | ((key & ((1 << 64) - 1)) << 32) | (sub & 0xFFFFFFFF))
    return ids


def describe(ident):
    return (ID_CATEGORIES[ident >> 96], (ident >> 32) & ((1 << 64) - 1), ident & 0xFFFFFFFF)


# ---- the originals, converted once, and their references -------------------------------------
class Original:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-4]
        with open(path, "rb") as f:
            self.data = f.read()
        self.blocks = walk(self.data)
        self.fields = count_fields(self.data, self.blocks)
        self.refs = {}

    def block_start(self, x):
        """Where the block (or header) holding byte x starts: bytes before it are intact."""
        start = 0
        for off, end, _, _ in self.blocks:
            if off > x:
                break
            start = off
        return start

    def whole_before(self, x):
        """How many blocks lie wholly before byte x."""
        return sum(1 for _, end, _, _ in self.blocks if end <= x)

    def reference_file(self, x, keep_rings):
        n = self.whole_before(x)
        key = (n, keep_rings)
        if key not in self.refs:
            cut = self.blocks[n - 1][1] if n else 4096
            data = bytearray(self.data[:cut])
            if not keep_rings:
                for off, end, kind, payload in self.blocks[:n]:
                    if kind == RING and payload >= 16:
                        struct.pack_into("<I", data, off + 48, 0)  # state: free
            ref = os.path.join(work, f"{self.name}.ref{n}{'r' if keep_rings else ''}.kob")
            with open(ref, "wb") as f:
                f.write(data)
            self.refs[key] = ref
        return self.refs[key]


DAMAGE = re.compile(r"damaged at byte (\d+)")
trace_of = [Original(p) for p in originals]
for o in trace_of:
    status, lines, _, outcome = convert(o.path, os.path.join(work, o.name + ".full"))
    kc.expect_eq((outcome, status), ("exit", 0), f"{o.name}: the undamaged file converts ({lines})")
    # make_raw_trace's crash mode ends in a write cut short: damage the original already has.
    o.named = {int(m.group(1)) for l in lines for m in [DAMAGE.search(l)] if m}
    kc.check(len(identities(os.path.join(work, o.name + ".full"))) > 0, f"{o.name}: events in the undamaged conversion")
    print(f"{o.name}: {len(o.data)} bytes, {len(o.blocks)} blocks", flush=True)


# ---- the variants -----------------------------------------------------------------------------
KINDS = ["truncate", "flip", "zero4k", "append", "concat", "count"]


def make_variant(i):
    """One damage, drawn: (original, kind, the first damaged byte, named always, reference, edits).
    The edits are kept instead of the damaged bytes (made where the variant is converted), so that
    this process stays small: the peak RSS of a kob it forks counts this process's pages too."""
    o = rng.choice(trace_of)
    kind = KINDS[i % len(KINDS)]
    size = len(o.data)
    must_name = False  # the reader can always tell this damage
    if kind == "truncate":
        x = rng.randrange(0, size)
        edits = [("cut", x)]
        must_name = any(off < x < end for off, end, _, _ in o.blocks)  # a block cut short
    elif kind == "flip":
        x = rng.randrange(0, size)
        spots = {x} | {min(size - 1, x + rng.randrange(0, 256)) for _ in range(rng.randint(1, 8) - 1)}
        edits = [("xor", sp, rng.randrange(1, 256)) for sp in sorted(spots)]
    elif kind == "zero4k":
        x = rng.randrange(0, size)
        n = min(4096, size - x)
        edits = [("set", x, bytes(n))]
        x += next((k for k in range(n) if o.data[x + k] != 0), n)  # the first byte it changed
        if x == size:
            return None
    elif kind == "append":
        x = size
        junk = bytearray(rng.randbytes(rng.randint(1, 20000)))
        junk[0] = 0xAA  # never the block magic's first byte
        edits = [("add", bytes(junk))]
        must_name = True
    elif kind == "concat":
        x = size
        edits = [("add", rng.choice(trace_of))]
        must_name = True
    else:
        x, width, what = rng.choice(o.fields)
        value = (1 << 63) if width == 8 else rng.choice([(1 << 32) - 1, 1 << 31])
        edits = [("set", x, struct.pack("<Q" if width == 8 else "<I", value))]
        kind = f"count {what}"
        must_name = what != "lost events"
    return o, kind, x, must_name, o.reference_file(x, kind == "truncate"), edits


def damaged_bytes(o, edits):
    data = bytearray(o.data)
    for e in edits:
        if e[0] == "cut":
            del data[e[1]:]
        elif e[0] == "xor":
            data[e[1]] ^= e[2]
        elif e[0] == "set":
            data[e[1]:e[1] + len(e[2])] = e[2]
        else:
            data += e[1].data if isinstance(e[1], Original) else e[1]
    return bytes(data)


variants = []
i = 0
while len(variants) < args.variants:
    v = make_variant(i)
    i += 1
    if v is not None:
        variants.append(v)
ref_ids = {}
ref_jobs = sorted({v[4] for v in variants})


def convert_ref(ref):
    status, lines, _, outcome = convert(ref, ref[:-4])
    return ref, status, outcome, identities(ref[:-4], whole_only=True)


failures_by_kind = {}
events_checked = 0
peak_kib, peak_what = 0, ""
named = 0


def run_variant(index):
    o, kind, x, must_name, ref, edits = variants[index]
    path = os.path.join(work, f"v{index}.kob")
    with open(path, "wb") as f:
        f.write(damaged_bytes(o, edits))
    result = convert(path, path[:-4])
    missing = ref_ids.get(ref, set()) - identities(path[:-4])
    # The summary alone: the per-thread engine's path (a trace file takes the builder's), under
    # the same bounds.
    summary_only = convert(path, path[:-4] + "-s", "summary,json")
    for suffix in (".kob", ".trace.json", ".summary.json", ".summary.txt", ".stderr", "-s.summary.json", "-s.summary.txt", "-s.stderr"):
        try:
            os.remove(path[:-4] + suffix)
        except FileNotFoundError:
            pass
    return index, result, missing, summary_only


with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    for ref, status, outcome, ids in pool.map(convert_ref, ref_jobs):
        kc.expect_eq((outcome, status), ("exit", 0), f"reference {os.path.basename(ref)} converts")
        ref_ids[ref] = ids
    results = list(pool.map(run_variant, range(len(variants))))

for index, (status, lines, rss_kib, outcome), missing, (s_status, _, s_rss_kib, s_outcome) in results:
    o, kind, x, must_name, ref, edits = variants[index]
    what = f"variant {index} ({o.name}, {kind} at byte {x})"
    bad = []
    if outcome != "exit":
        bad.append(f"{outcome}")
    elif status not in (0, 1) or (x >= 4096 and status != 0):
        bad.append(f"exit status {status}")
    if s_outcome != "exit":
        bad.append(f"--to=summary,json: {s_outcome}")
    elif s_status not in (0, 1) or (x >= 4096 and s_status != 0):
        bad.append(f"--to=summary,json: exit status {s_status}")
    if SANITIZED and s_rss_kib > RSS_LIMIT_KIB:
        bad.append(f"--to=summary,json: peak RSS {s_rss_kib} KiB")
    rss_kib = max(rss_kib, s_rss_kib)
    if SANITIZED and rss_kib > RSS_LIMIT_KIB:
        bad.append(f"peak RSS {rss_kib} KiB")
    if rss_kib > peak_kib:
        peak_kib, peak_what = rss_kib, what
    own = [l for l in lines if l.startswith("kob:") and not l.startswith("kob: warning:")]
    if len(own) > 3 or len(lines) > MAX_LINES:
        bad.append(f"{len(lines)} lines on stderr, {len(own)} of them kob's own")
    offsets = [int(m.group(1)) for l in lines for m in [DAMAGE.search(l)] if m]
    start = o.block_start(x) if x < len(o.data) else x
    if any(r < min(start, x) and r not in o.named for r in offsets):
        bad.append(f"damage named at byte {min(offsets)}, in the intact part before {start}")
    if offsets:
        named += 1
    if must_name and not any(min(start, x) <= r <= x or (r in o.named and r <= x) for r in offsets):
        bad.append("the damage is not named at its block")
    events_checked += len(ref_ids.get(ref, ()))
    if outcome == "exit" and status == 0 and missing:
        bad.append(f"{len(missing)} of {len(ref_ids[ref])} events before the damage lost, e.g. {[describe(m) for m in sorted(missing)[:3]]}")
    if bad:
        failures_by_kind[kind.split()[0]] = failures_by_kind.get(kind.split()[0], 0) + 1
        kc.check(False, f"{what}: {'; '.join(bad)}; stderr {lines[:4]}")

counts = {}
for v in variants:
    counts[v[1].split()[0]] = counts.get(v[1].split()[0], 0) + 1
print(f"{len(variants)} variants {counts}, {len(ref_jobs)} references ({events_checked} events before the damage checked), damage named in {named}, "
      f"failed {failures_by_kind or 0}, peak RSS {peak_kib} KiB ({peak_what}; it counts this process's {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} KiB, forked), {time.monotonic() - started:.1f} s", flush=True)
if kc.failures:
    print(f"seed {seed}")
kc.finish()
