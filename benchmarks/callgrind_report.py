#!/usr/bin/env python3
"""Per-kernel views of callgrind profiles of tiny_kernels (used by benchmarks/run.sh).

  callgrind_report.py functions OURS.out EMPTY.out N
      Markdown table of our library's functions (and the libc functions it calls), inclusive and
      self instructions per kernel, from callgrind_annotate. libc functions that Kokkos itself
      also calls are shown as ours minus the empty tool's, so only our share remains.
  callgrind_report.py lines OURS_DEBUG.out N
      Our source lines (needs a library with debug info valgrind can read) with their
      instructions per kernel, and the per-inlined-source totals ("file:function" rows).

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


def main(argv):
    if len(argv) >= 5 and argv[1] == "functions":
        cmd_functions(argv[2], argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "lines":
        cmd_lines(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
