#!/usr/bin/env python3
"""Per-kernel views of callgrind profiles of tiny_kernels (used by benchmarks/run.sh).

  callgrind_report.py functions OURS.out EMPTY.out N
      Markdown table of our library's functions (and the libc functions it calls), inclusive and
      self instructions per kernel, from callgrind_annotate. libc functions that Kokkos itself
      also calls are shown as ours minus the empty tool's, so only our share remains.
  callgrind_report.py lines OURS_DEBUG.out N
      Our source lines (needs a library with debug info valgrind can read) with their
      instructions per kernel, and the per-inlined-source totals ("file:function" rows).
  callgrind_report.py callbacks OURS.out N [EMPTY.out] [--unit=kernel|region] [--budget=80]
                      [--minus=OURS_SMALL.out]
      Our OMPT callbacks (on_*) and Kokkos hooks (kokkosp_*): calls, inclusive instructions per
      kernel (or region) and per call, against the per-callback budget; with EMPTY.out also the
      empty tools' functions of the same name (benchmarks/empty_ompt_tool.cpp, empty_tool.cpp).
      Read straight from the profile (no callgrind_annotate), so the call counts are callgrind's:
      they include calls made while collection was off (the warm-up), whose costs are not
      counted; calls per kernel are therefore rounded to whole numbers (when within 0.25).
      With --minus, OURS_SMALL.out (the same run with fewer kernels, whole program collected)
      is subtracted and N is the difference in kernels: exact counts for all threads.

N is the number of kernels launched while collection was on (--toggle-collect='launch_loop*').
"""
import re
import subprocess
import sys

ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)$")
# libc functions our hooks may call; shown minus the empty tool's count.
LIBC = ("strcmp", "memset", "memcpy", "memmove", "malloc", "free", "aligned_alloc", "_int_malloc",
        "_int_memalign", "mmap", "clock_gettime", "pthread_mutex", "syscall")
OURS_SRC = "/src/"  # our sources, as paths in the debug info


def annotate(path, inclusive, extra=()):
    out = subprocess.run(
        ["callgrind_annotate", "--threshold=100", "--inclusive=" + ("yes" if inclusive else "no"), *extra, path],
        check=True, capture_output=True, text=True).stdout
    return out


def function_rows(text):
    """{(file, function, object or ''): Ir} from the file:function table."""
    rows = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith("Ir") and "file:function" in line:
            in_table = True
            continue
        if in_table and line.startswith("-- Auto-annotated"):
            break
        if not in_table:
            continue
        m = ROW.match(line)
        if not m:
            continue
        cost = int(m.group(1).replace(",", ""))
        rest = m.group(2)
        obj = ""
        mo = re.search(r" \[([^\]]*)\]$", rest)
        if mo:
            obj = mo.group(1)
            rest = rest[: mo.start()]
        file, _, fn = rest.partition(":")
        rows[(file, fn, obj)] = rows.get((file, fn, obj), 0) + cost
    return rows


def by_function(rows):
    """Ir per function name (summed over files: inlined parts are attributed to their caller)."""
    out = {}
    objs = {}
    for (file, fn, obj), cost in rows.items():
        out[fn] = out.get(fn, 0) + cost
        if obj:
            objs[fn] = obj
    return out, objs


def is_ours(fn, obj):
    return "libkokkos_ompt_bridge" in obj or fn.startswith("kob::") or fn.startswith("kokkosp_")


def is_libc(fn):
    return any(name in fn for name in LIBC)


def short(fn, width=70):
    fn = fn.replace("(anonymous namespace)", "{anon}")
    fn = re.sub(r"\(.*\)", "()", fn) if len(fn) > width else fn
    return fn if len(fn) <= width else fn[: width - 3] + "..."


def cmd_functions(ours_path, empty_path, n):
    n = float(n)
    # Only the rows with an object are per-function totals; the file:function rows without one
    # are the same function's lines from other (inlined) source files, already included.
    incl_ours, objs = by_function({k: v for k, v in function_rows(annotate(ours_path, True)).items() if k[2]})
    self_ours, _ = by_function(function_rows(annotate(ours_path, False)))
    incl_empty, _ = by_function({k: v for k, v in function_rows(annotate(empty_path, True)).items() if k[2]})
    self_empty, _ = by_function(function_rows(annotate(empty_path, False)))
    rows = []
    for fn, cost in incl_ours.items():
        obj = objs.get(fn, "")
        if is_ours(fn, obj):
            rows.append((fn, cost, self_ours.get(fn, 0)))
        elif is_libc(fn):
            d_incl = cost - incl_empty.get(fn, 0)
            d_self = self_ours.get(fn, 0) - self_empty.get(fn, 0)
            if d_incl > 0:
                rows.append((fn + " (minus empty tool's)" if fn in incl_empty else fn, d_incl, d_self))
    rows.sort(key=lambda r: -r[1])
    print("| function | inclusive Ir/kernel | self Ir/kernel |")
    print("|---|---:|---:|")
    for fn, incl, slf in rows:
        print(f"| `{short(fn)}` | {incl / n:.1f} | {slf / n:.1f} |")


def cmd_lines(debug_path, n):
    n = float(n)
    incl = function_rows(annotate(debug_path, True))
    print("Per inlined source (callgrind `file:function` rows, inclusive):")
    print()
    print("| source file : function | inclusive Ir/kernel |")
    print("|---|---:|")
    for (file, fn, obj), cost in sorted(incl.items(), key=lambda kv: -kv[1]):
        if OURS_SRC in file and ("kob::" in fn or "kokkosp_" in fn) and cost / n >= 0.05:
            print(f"| `{file.split(OURS_SRC, 1)[1]}` : `{short(fn, 50)}` | {cost / n:.1f} |")
    print()
    print("Per source line (self Ir/kernel; `=>` lines are calls, inclusive):")
    print()
    print("```")
    text = annotate(debug_path, False, ["--auto=yes", "--context=0"])
    current = None
    lineno = None
    last_src = None
    for line in text.splitlines():
        m = re.match(r"^-- Auto-annotated source: (.*)$", line)
        if m:
            current = m.group(1) if OURS_SRC in m.group(1) else None
            lineno = None
            last_src = None
            if current:
                print("== " + current.split(OURS_SRC, 1)[1])
            continue
        if current is None:
            continue
        m = re.match(r"^-- line (\d+) -+$", line)
        if m:
            lineno = int(m.group(1))
            continue
        if re.match(r"^\s*\.\s", line):  # a line without cost
            if lineno is not None:
                lineno += 1
            continue
        m = ROW.match(line)
        if not m:
            continue
        cost = int(m.group(1).replace(",", ""))
        src = m.group(2)
        is_call = src.startswith("=>")
        is_unknown = src.startswith("<counts for unidentified lines")
        where = "" if is_call or is_unknown or lineno is None else str(lineno)
        if not is_call and not is_unknown and lineno is not None:
            last_src = (lineno, src.strip())
            lineno += 1
        per = cost / n
        if per < 0.05:
            continue
        if is_call:
            src = "    => " + re.sub(r"^=> \S*?:", "", src)
            if last_src is not None:
                src += f"   [from line {last_src[0]}: {last_src[1][:60]}]"
        elif is_unknown:
            src = "<lines without line info>"
        print(f"{where:>5} {per:7.1f}  {src.rstrip()[:200]}")
    print("```")


def parse_profile(path):
    """Reads a callgrind profile (positions: line, events: Ir) without callgrind_annotate.

    Returns {function name: {"obj": object, "self": Ir, "incl": Ir, "calls": times called}}.
    Inclusive cost is self cost plus the cost of the calls the function makes (recursive calls
    to itself excluded); call counts are summed over all callers.
    """
    names = {"ob": {}, "fl": {}, "fn": {}}
    space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
             "fn": "fn", "cfn": "fn"}
    funcs = {}

    def entry(fn):
        return funcs.setdefault(fn, {"obj": "", "self": 0, "incl": 0, "calls": 0})

    def resolve(kind, value):
        m = re.match(r"^\((\d+)\)(?:\s(.*))?$", value)
        table = names[space[kind]]
        if not m:
            return value
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    ob = cob = fn = cfn = None
    pending_call = None  # (callee, count): the next cost line is that call's inclusive cost
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn|calls|jump|jcnd)=(.*)$", line)
            if m:
                key, value = m.groups()
                if key == "ob":
                    ob = resolve(key, value)
                elif key == "cob":
                    cob = resolve(key, value)
                elif key == "fn":
                    fn = resolve(key, value)
                    e = entry(fn)
                    e["obj"] = e["obj"] or ob or ""
                    cob = None
                elif key == "cfn":
                    cfn = resolve(key, value)
                    e = entry(cfn)
                    e["obj"] = e["obj"] or cob or ob or ""
                elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                    resolve(key, value)
                elif key == "calls":
                    pending_call = (cfn, int(value.split()[0]))
                continue
            if fn is None or not re.match(r"^[-+*0-9]", line):
                continue  # header lines (events:, summary:, totals: ...)
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            if pending_call is not None:
                callee, count = pending_call
                pending_call = None
                entry(callee)["calls"] += count
                if callee != fn:
                    entry(fn)["incl"] += cost
                cob = None
            else:
                entry(fn)["self"] += cost
                entry(fn)["incl"] += cost
    return funcs


def short_name(fn):
    """kob::omp::(anonymous namespace)::on_parallel_begin(...) -> on_parallel_begin."""
    base = re.sub(r"\(.*$", "", fn.replace("(anonymous namespace)", "anon"))
    return base.split("::")[-1]


def cmd_callbacks(ours_path, n, empty_path=None, unit="kernel", budget=80.0, minus_path=None):
    n = float(n)
    ours = parse_profile(ours_path)
    if minus_path:
        for fn, e in parse_profile(minus_path).items():
            if fn in ours:
                ours[fn]["incl"] -= e["incl"]
                ours[fn]["calls"] -= e["calls"]
    empty = parse_profile(empty_path) if empty_path else {}
    empty_by_short = {}
    for fn, e in empty.items():
        if "libkob_empty" in e["obj"]:
            empty_by_short[short_name(fn)] = e
    rows = []
    for fn, e in ours.items():
        name = short_name(fn)
        if "libkokkos_ompt_bridge" not in e["obj"] or not re.match(r"^(on_|kokkosp_)", name) or e["incl"] == 0:
            continue
        per_unit = e["calls"] / n
        calls = round(per_unit)
        if calls == 0 or abs(per_unit - calls) > 0.25:
            calls = per_unit  # not a whole number per unit: show the raw ratio
        per_call = e["incl"] / (calls * n) if calls else float("nan")
        ee = empty_by_short.get(name)
        empty_per_call = ""
        if ee is not None and ee["calls"]:
            ecalls = round(ee["calls"] / n) or ee["calls"] / n
            empty_per_call = f"{ee['incl'] / (ecalls * n):.1f}"
        rows.append((name, calls, e["incl"] / n, per_call, empty_per_call))
    rows.sort(key=lambda r: (not r[0].startswith("kokkosp_"), -r[2]))
    fmt_calls = lambda c: f"{c:d}" if isinstance(c, int) else f"{c:.3f}"
    print(f"| function (our library) | calls per {unit} | inclusive Ir per {unit} | Ir per call | empty tool's Ir per call | budget |")
    print("|---|---:|---:|---:|---:|---|")
    omp_total = omp_calls = kokkos_total = 0.0
    worst = 0.0
    for name, calls, incl, per_call, eper in rows:
        if name.startswith("on_"):
            verdict = f"≤ {budget:g}: " + ("ok" if per_call <= budget else f"**OVER by {per_call - budget:.1f}**")
            omp_total += incl
            omp_calls += calls
            worst = max(worst, per_call)
        else:
            verdict = "begin + end ≤ 150 (see below)"
            kokkos_total += incl
        print(f"| `{name}` | {fmt_calls(calls)} | {incl:.1f} | {per_call:.1f} | {eper or '-'} | {verdict} |")
    print()
    if omp_calls:
        print(f"OMPT callbacks: {omp_calls:g} calls, {omp_total:.1f} Ir per {unit} "
              f"({omp_total / omp_calls:.1f} per call on average, worst {worst:.1f}; budget {budget:g} per callback: "
              + ("holds" if worst <= budget else "**exceeded**") + ").")
    if kokkos_total:
        print(f"Kokkos hooks: {kokkos_total:.1f} Ir per {unit} (budget 150 for begin + end: "
              + ("holds" if kokkos_total <= 150 else "**exceeded**") + ").")


def main(argv):
    if len(argv) >= 5 and argv[1] == "functions":
        cmd_functions(argv[2], argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "lines":
        cmd_lines(argv[2], argv[3])
    elif len(argv) >= 4 and argv[1] == "callbacks":
        opts = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv[4:] if a.startswith("--") and "=" in a}
        rest = [a for a in argv[4:] if not a.startswith("--")]
        cmd_callbacks(argv[2], argv[3], rest[0] if rest else None, opts.get("--unit", "kernel"),
                      float(opts.get("--budget", "80")), opts.get("--minus"))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
