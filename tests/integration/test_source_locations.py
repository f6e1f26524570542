"""Source locations of OpenMP constructs (CONTRACT.md): runs a program whose constructs sit at lines
it prints (`KOB_LINE <label> <file> <line>`, source_lines.c / .cpp / source_plugin.c) and checks,
construct by construct, the `source` arg of its events and the name of its slices, exactly, and how
many there are. One case per run:
  c, cpp, nopie   built with -g: `function (file:line)`, `inlined (file:line) in main` for the static
                  function inlined at -O2, slices `construct function file:line`
  dlopen          the C program with source_plugin loaded by dlopen() after start and dlclose()d
                  before the last region, the library LD_PRELOADed: the plugin's lines too
  g0              built without -g: `symbol+0xOFF (module)` with the symbol table's function holding
                  the address, slices `construct symbol+0xOFF`; counted per function (clang's
                  code differs with -g, so no -g build tells the lines)
  stripped        the -g build stripped: `module+0xOFF`, slices `construct module+0xOFF`
  rebuilt         a copy of the -g build run, replaced by another build (KOB_REBUILT=1) before
                  `kob convert`: one line on stderr about it, then `module+0xOFF` and no line at all
For stripped and rebuilt the test maps each offset to its line with llvm-symbolizer on the -g build
of the same code (--reference, the build that ran)."""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kob_check as kc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--case", required=True, choices=["c", "cpp", "nopie", "dlopen", "g0", "stripped", "rebuilt"])
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--kob", required=True)
ap.add_argument("--symbolizer", default="")
ap.add_argument("--reference", help="the -g build of the same code (g0, stripped)")
ap.add_argument("--plugin", help="source_plugin's library (dlopen)")
ap.add_argument("--rebuilt", help="the KOB_REBUILT=1 build (rebuilt)")
a = ap.parse_args()

T = 2  # OMP_NUM_THREADS
R = 3  # calls of compute_step / physics::Grid::step
lib = os.path.abspath(a.lib)
kob = os.path.abspath(a.kob)
program = os.path.abspath(a.program)
wd = kc.workdir()
prefix = os.path.join(wd, "out")
if a.case == "rebuilt":  # the run's executable is a copy, replaced after the run; the build stays as it is
    shutil.copy2(program, os.path.join(wd, "source_lines"))
    program = os.path.join(wd, "source_lines")
module = os.path.basename(program)
cpp = a.case == "cpp"

# The function each label's construct is in, as the demangler prints it; (function, caller) where
# the directive's function was inlined. Constructs inside a parallel region are in clang's outlined
# function (`compute_step.omp_outlined_debug__` in DWARF): the user's function is the one named.
if cpp:
    FUNCTIONS = {label: "physics::Grid::step(int)"
                 for label in ("parallel", "loop_static", "barrier", "critical", "lock", "single", "task")}
    FUNCTIONS["template_parallel"] = "double physics::weighted_sum<double>(double const*, int)"
    FUNCTIONS["inlined_parallel"] = ("inlined_region(int)", "main")
    FUNCTIONS["lock_init"] = FUNCTIONS["lock_destroy"] = "main"
else:
    FUNCTIONS = {label: "compute_step"
                 for label in ("parallel", "loop_static", "barrier", "critical", "lock", "single", "task")}
    FUNCTIONS["inlined_parallel"] = ("inlined_region", "main")
    FUNCTIONS["after_plugin"] = "after_plugin"
    FUNCTIONS["lock_init"] = FUNCTIONS["lock_destroy"] = "main"
    FUNCTIONS["plugin_parallel"] = FUNCTIONS["plugin_loop"] = FUNCTIONS["plugin_critical"] = "plugin_run"
# How slice names and tables show those functions: without parameter list and return type.
SHOWN = {"physics::Grid::step(int)": "physics::Grid::step",
         "double physics::weighted_sum<double>(double const*, int)": "physics::weighted_sum<double>",
         "inlined_region(int)": "inlined_region"}


def shown(function):
    return SHOWN.get(function, function)


# Without DWARF (g0): the symbol holding each label's construct in the C program.
SYMBOLS = {label: "compute_step.omp_outlined" for label in ("loop_static", "barrier", "critical", "lock", "single", "task")}
SYMBOLS.update({"parallel": "compute_step", "inlined_parallel": "main", "after_plugin": "after_plugin",
                "lock_init": "main", "lock_destroy": "main"})


def X(cat, construct, count, **args):
    return {"cat": cat, "construct": construct, "count": count, "ph": "X", "args": args}


def instant(cat, construct, count):
    return {"cat": cat, "construct": construct, "count": count, "ph": "i", "args": {}}


# label -> the events of its construct: category, name before the location, count (exact, or a
# (min, max) range), and the args they must have.
EXPECTED = {
    "parallel": [X("omp.parallel", "parallel", R),
                 # the primary thread's end-of-region barrier has the region's address; the others' none
                 X("omp.sync", "barrier_implicit_parallel", (R, R * T))],
    "loop_static": [X("omp.work", "loop_static", R * T), X("omp.sync", "barrier_implicit_workshare", R * T)],
    "barrier": [X("omp.sync", "barrier_explicit", R * T)],
    "critical": [X("omp.mutex", "critical", R * T, phase="hold"), X("omp.mutex", "critical", R * T, phase="wait")],
    "lock": [X("omp.mutex", "lock", R * T, phase="hold"), X("omp.mutex", "lock", R * T, phase="wait")],
    "single": [X("omp.work", "single_executor", R), X("omp.work", "single_other", R * (T - 1)),
               X("omp.sync", "barrier_implicit_workshare", R * T)],
    "task": [X("omp.task", "task", R, status="complete"),
             instant("omp.task_create", "task create", R)],
    "template_parallel": [X("omp.parallel", "parallel", 1), X("omp.work", "loop_static", T)],
    "inlined_parallel": [X("omp.parallel", "parallel", 1)],
    "after_plugin": [X("omp.parallel", "parallel", 1)],
    "lock_init": [instant("omp.lock", "lock_init", 1)],
    "lock_destroy": [instant("omp.lock", "lock_destroy", 1)],
    "plugin_parallel": [X("omp.parallel", "parallel", 1), X("omp.sync", "barrier_implicit_parallel", (1, T))],
    "plugin_loop": [X("omp.work", "loop_static", T)],
    "plugin_critical": [X("omp.mutex", "critical", T, phase="hold"), X("omp.mutex", "critical", T, phase="wait")],
}

DWARF_SOURCE = re.compile(r"^(?P<function>.+) \((?P<path>[^()]+):(?P<line>\d+)\)(?: in (?P<caller>.+))?$")
SYMBOL_SOURCE = re.compile(r"^(?P<symbol>.+)\+0x(?P<offset>[0-9a-f]+) \((?P<module>[^()]+)\)$")
MODULE_SOURCE = re.compile(r"^(?P<module>[^ ()]+)\+0x(?P<offset>[0-9a-f]+)$")


# ---- ELF: the symbol table and .text of our own builds (64-bit little-endian) ----
def elf_sections(path):
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        name, kind, _, _, off, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append({"name": name, "type": kind, "offset": off, "size": size, "link": link, "entsize": entsize})
    names = sections[shstrndx]
    for s in sections:
        end = data.index(b"\0", names["offset"] + s["name"])
        s["name"] = data[names["offset"] + s["name"]:end].decode()
    return data, sections


def elf_functions(path):
    """(name, address, size) of each function symbol of .symtab."""
    data, sections = elf_sections(path)
    out = []
    for s in sections:
        if s["type"] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[s["link"]]
        for off in range(s["offset"], s["offset"] + s["size"], 24):
            name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", data, off)
            if info & 0xF == 2 and shndx != 0:  # STT_FUNC, defined
                end = data.index(b"\0", strtab["offset"] + name)
                out.append((data[strtab["offset"] + name:end].decode(), value, size))
    return out


def symbolize(binary, offsets):
    """offset -> (file basename, line) of the innermost frame, from the -g build's DWARF."""
    if not offsets:
        return {}
    p = subprocess.run([a.symbolizer, f"--obj={binary}"], input="".join(f"0x{o:x}\n" for o in sorted(offsets)),
                       capture_output=True, text=True, timeout=120)
    blocks = [b.splitlines() for b in p.stdout.strip().split("\n\n")]
    out = {}
    for o, lines in zip(sorted(offsets), blocks):
        m = re.match(r"^(.*):(\d+):\d+$", lines[1]) if len(lines) > 1 else None
        out[o] = (os.path.basename(m.group(1)), int(m.group(2))) if m else (None, 0)
    return out


# ---- the run ----
env = {"OMP_NUM_THREADS": str(T), "KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"}
cmd = [program] + ([os.path.abspath(a.plugin)] if a.plugin else [])
base_rc, base_out, base_err = kc.run(cmd, {"OMP_NUM_THREADS": str(T)}, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD"))
kc.expect_eq(base_rc, 0, f"exit status without the tool ({base_err.strip()[-300:]})")
if a.case == "dlopen":
    # LD_PRELOAD: the program's dlclose() is the tool's, which updates the module map first.
    rc, out, err = kc.run(cmd, dict(env, LD_PRELOAD=lib), cwd=wd, unset=("OMP_TOOL_LIBRARIES",))
else:
    rc, out, err = kc.run(cmd, dict(env, OMP_TOOL_LIBRARIES=lib), cwd=wd, unset=("LD_PRELOAD",))
kc.expect_eq(rc, 0, f"exit status with the tool ({err.strip()[-300:]})")
kc.expect_eq([l for l in err.splitlines() if l.strip() and " wrote " not in l], [], "nothing on stderr but the files written")
known = {}
for line in out.splitlines():
    if line.startswith("KOB_LINE "):
        _, label, file, number = line.split()
        known[label] = (file, int(number))
kc.expect_eq([l for l in out.splitlines() if l.startswith("KOB_LINE ")],
             [l for l in base_out.splitlines() if l.startswith("KOB_LINE ")], "KOB_LINE lines as without the tool")
kc.check(all(n > 0 for _, n in known.values()), f"every label has its line: {known}")
if a.case != "dlopen":
    known = {k: v for k, v in known.items() if not k.startswith("plugin_")}
else:
    kc.check({"plugin_parallel", "plugin_critical"} <= set(known), f"the plugin printed its lines: {sorted(known)}")

if a.case == "rebuilt":
    # The run converted at exit with the program still in place; then the program is rebuilt.
    shutil.copy2(os.path.abspath(a.rebuilt), program)
    conv = os.path.join(wd, "conv")
    crc, _, cerr = kc.run([kob, "convert", prefix + ".kob", f"--output={conv}", "--to=chrome,summary,json"])
    kc.expect_eq(crc, 0, f"kob convert exit status ({cerr.strip()[-300:]})")
    notes = [l for l in kc.without_sanitizer_notes(cerr.splitlines()) if l.strip() and " wrote " not in l]
    if kc.expect_eq(len(notes), 1, f"kob convert: one line about the rebuilt program besides 'wrote' ({notes})"):
        kc.check(program in notes[0] or module in notes[0], f"the line names the program: {notes[0]!r}")
        kc.check("build id" in notes[0].lower() or "rebuilt" in notes[0].lower() or "changed" in notes[0].lower(),
                 f"the line says the file changed since the run: {notes[0]!r}")
    prefix = conv

trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
omp_events = [e for e in trace["traceEvents"] if str(e.get("cat", "")).startswith("omp.") and e.get("ph") in ("X", "i")]
kc.check(omp_events, "the trace has OpenMP events")

# ---- what each event's source says, and the location (file basename, line) it stands for ----
# How the sources look in this case: "dwarf", "symbol" (g0) or "module" (stripped, rebuilt).
style = {"g0": "symbol", "stripped": "module", "rebuilt": "module"}.get(a.case, "dwarf")
reference = os.path.abspath(a.reference) if a.reference else (os.path.abspath(a.program) if a.case == "rebuilt" else None)
if style != "dwarf":
    if not a.symbolizer and style == "module":
        print("SKIP: no llvm-symbolizer to map offsets to lines")
        sys.exit(77)
functions = elf_functions(program) if style == "symbol" else []

FORMS = (("dwarf", DWARF_SOURCE), ("symbol", SYMBOL_SOURCE), ("module", MODULE_SOURCE))
parsed = {}  # source string -> (form, match), or None when it has none of the three forms
for e in omp_events:
    src = (e.get("args") or {}).get("source")
    if src is not None and src not in parsed:
        parsed[src] = next(((form, m) for form, rx in FORMS if (m := rx.match(src))), None)


def module_offset(form, m):
    """The offset in our program's address space a symbol or module source stands for (None: elsewhere)."""
    if form == "dwarf" or m.group("module") != module:
        return None
    off = int(m.group("offset"), 16)
    if form == "symbol":
        addr = next((addr for name, addr, _ in functions if name == m.group("symbol")), None)
        return None if addr is None else off + addr
    return off


offsets = {o for v in parsed.values() if v and (o := module_offset(*v)) is not None}
lines_at = symbolize(reference, offsets) if style == "module" else {}


def location(src):
    """(file basename, line) an event's source stands for in this program, or None."""
    v = parsed.get(src)
    if v is None:
        return None
    form, m = v
    if form == "dwarf":
        return os.path.basename(m.group("path")), int(m.group("line"))
    off = module_offset(form, m)
    if off is None:
        return None
    return ("symbol", m.group("symbol")) if form == "symbol" else lines_at.get(off)


def expected_source(label, src):
    """The exact source and slice-name suffix an event of `label` with source `src` must have."""
    file, line = known[label]
    if style == "dwarf":
        v = parsed.get(src)
        # DWARF's path (with the compile directory), checked to end with the file
        path = v[1].group("path") if v and v[0] == "dwarf" else file
        want = FUNCTIONS[label]
        if isinstance(want, tuple):
            return f"{want[0]} ({path}:{line}) in {want[1]}", f"{shown(want[0])} {file}:{line}", path
        return f"{want} ({path}:{line})", f"{shown(want)} {file}:{line}", path
    vaddr = module_offset(*parsed[src]) if parsed.get(src) else 0
    if style == "module":
        return f"{module}+0x{vaddr:x}", f"{module}+0x{vaddr:x}", None
    cover = [(name, addr) for name, addr, size in functions if addr <= vaddr < addr + max(size, 1)]
    name, addr = cover[0] if cover else ("?", vaddr)
    return f"{name}+0x{vaddr - addr:x} ({module})", f"{name}+0x{vaddr - addr:x}", None


def in_runtime(src):
    """Whether a source names the OpenMP runtime's own code (libomp), not the program's."""
    m = SYMBOL_SOURCE.match(src or "") or MODULE_SOURCE.match(src or "")
    return bool(m) and m.group("module").startswith("libomp")


by_location = defaultdict(list)
for e in omp_events:
    src = (e.get("args") or {}).get("source")
    if src is not None:
        by_location[location(src)].append(e)
kc.expect_eq(sorted(s for s, v in parsed.items() if v is None)[:5], [], "sources of none of the contract's forms")
kc.expect_eq(sorted(s for s, v in parsed.items() if v and v[0] != style and module_offset(*v) is not None)[:5], [],
             f"sources in {module} not of the {style} form")

# What is checked where: with lines, each label's events at its (file, line); without (g0), the
# events of the labels sharing a function together, at ("symbol", function).
checks = defaultdict(dict)  # key -> {(cat, ph, construct, args): [count, labels]}
for label, (file, line) in sorted(known.items()):
    if label not in EXPECTED or (style == "symbol" and label not in SYMBOLS):
        continue
    key = ("symbol", SYMBOLS[label]) if style == "symbol" else (file, line)
    for exp in EXPECTED[label]:
        slot = (exp["cat"], exp["ph"], exp["construct"], tuple(sorted(exp["args"].items())))
        count = exp["count"] if isinstance(exp["count"], tuple) else (exp["count"], exp["count"])
        have = checks[key].get(slot)
        checks[key][slot] = [(have[0][0] + count[0], have[0][1] + count[1]), have[1] + [label]] if have else [count, [label]]

for key, slots in checks.items():
    here = by_location.get(key, [])
    where = f"{key[1]}" if key[0] == "symbol" else f"{key[0]}:{key[1]}"
    for (cat, ph, construct, args), (count, labels) in slots.items():
        what = f"{'+'.join(labels)} ({where}) {cat} {construct}" + "".join(f" {k}={v}" for k, v in args)
        matching = [e for e in here if e["cat"] == cat and e["ph"] == ph
                    and (e["name"] == construct or e["name"].startswith(construct + " "))
                    and all(e["args"].get(k) == v for k, v in args)]
        # libomp 19 sometimes hands omp_set_lock's acquire an address inside omp_set_lock itself
        # instead of its caller's (a thread's first lock under load): that event names the
        # runtime, truthfully, and counts with the site's.
        reported_inside = [e for e in omp_events if "lock" in labels and e["cat"] == cat and e["ph"] == ph
                           and kc.construct(e) == construct and all(e["args"].get(k) == v for k, v in args)
                           and in_runtime((e.get("args") or {}).get("source"))]
        if count[0] == count[1]:
            kc.expect_eq(len(matching) + len(reported_inside), count[0], f"{what}: events")
        else:
            kc.check(count[0] <= len(matching) <= count[1], f"{what}: {count[0]} to {count[1]} events, got {len(matching)}")
        wrong_source, wrong_name, wrong_path = set(), set(), set()
        for e in matching:
            src = e["args"]["source"]
            want_source, want_suffix, path = expected_source(labels[0], src)
            if src != want_source:
                wrong_source.add((src, want_source))
            # Instants are no slices: their name may stay the construct's alone.
            if e["name"] != f"{construct} {want_suffix}" and not (ph == "i" and e["name"] == construct):
                wrong_name.add((e["name"], f"{construct} {want_suffix}"))
            if path is not None and os.path.basename(path) != key[0]:
                wrong_path.add(path)
        kc.expect_eq(sorted(wrong_source)[:3], [], f"{what}: (source, expected source)")
        kc.expect_eq(sorted(wrong_name)[:3], [], f"{what}: (slice name, expected name)")
        kc.expect_eq(sorted(wrong_path), [], f"{what}: DWARF paths ending in another file")
    if not here:
        # What the constructs' events carry instead: the first few of their kinds, for the report.
        kinds = {construct for _, _, construct, _ in slots}
        seen = sorted({(e["name"], str((e.get("args") or {}).get("source"))) for e in omp_events
                       if e["name"].split(" ")[0] in kinds})[:4]
        print(f"note: nothing located at {where}; events of its kinds: {seen}")

# No event is placed at a line of ours that is no construct's (a wrong line); in the cases without
# line information, no source carries a line at all.
ours = {v for v in known.values()}
stray = sorted({(loc, e["name"]) for loc, evs in by_location.items() if loc and loc[0] in {f for f, _ in ours} and loc not in ours
                for e in evs})
kc.expect_eq(stray[:5], [], "events located at lines that are no known construct's")
if style != "dwarf":
    with_line = sorted({s for s in parsed if re.search(r"\.c(pp)?:\d+", s)})
    kc.expect_eq(with_line[:3], [], "no source names a file and line")

# The inlined case is inlined: no out-of-line copy of the static function (its outlined region
# function has a symbol of its own).
if a.case in ("c", "cpp"):
    names = [n for n, _, _ in elf_functions(program)]
    kc.expect_eq([n for n in names if "inlined_region" in n and "omp_outlined" not in n], [],
                 "inlined_region has no out-of-line copy (inlined into main)")

# summary.json openmp.constructs: the parallel region and the critical section of compute_step.
if a.case in ("c", "cpp", "nopie"):
    constructs = (summary.get("openmp") or {}).get("constructs")
    if kc.check(isinstance(constructs, list), "summary.json openmp.constructs is a list"):
        def entry(kind, label):
            file, line = known[label]
            return [c for c in constructs if c.get("kind") == kind and c.get("line") == line
                    and os.path.basename(str(c.get("file"))) == file]
        par = entry("parallel", "parallel")
        if kc.expect_eq(len(par), 1, "openmp.constructs: one entry for the parallel region"):
            p = par[0]
            kc.expect_eq((p.get("function"), p.get("calls"), p.get("team_size")), (FUNCTIONS["parallel"], R, T),
                         "parallel entry: function, calls, team size")
            kc.check(os.path.basename(str(p.get("module"))) == module, f"parallel entry: module {p.get('module')}")
            for key in ("total_ns", "mean_ns", "load_imbalance", "barrier_wait"):
                kc.check(key in p, f"parallel entry has {key}: {sorted(p)}")
        crit = entry("critical", "critical")
        if kc.expect_eq(len(crit), 1, "openmp.constructs: one entry for the critical section"):
            kc.check({"wait_ns", "hold_ns"} <= set(crit[0]), f"critical entry has wait_ns, hold_ns: {sorted(crit[0])}")
kc.finish()
