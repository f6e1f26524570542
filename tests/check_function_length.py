#!/usr/bin/env python3
"""Keeps functions short: prints every function definition under src/ longer than the limit
(lines from its name to its closing brace) and exits 1; exits 0 when there is none.

    check_function_length.py [--max N] [--list K] [SRC_DIR]   default N 100; --list K prints the K longest
    check_function_length.py --self-test                      a planted 101-line function must be found

How it measures: comments, strings and character literals are blanked, then braces are matched.
A brace opened where only namespaces, classes, structs, unions, enums and `extern "C"` blocks are
open starts a definition when the text before it (since the last `;`, `{` or `}`) names a
function: a parameter list closing before the brace, optionally followed by qualifiers,
`override`, `noexcept`, a trailing return type or a constructor's initializers. Lambdas and
blocks inside a function count as part of it."""
import os
import re
import sys
import tempfile

SOURCES = (".cpp", ".hpp", ".h", ".cc")
CONTAINER = re.compile(r'(?:^|[\s;}])(namespace|class|struct|union|enum)\b[^()]*$|extern\s+"C"\s*$', re.S)


def blank(text):
    """The text with comments, strings and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_function_head(head):
    head = head.strip()
    if not head or head.startswith("#"):
        return False
    if re.search(r"(?:^|[^=!<>])=\s*$", head) or head.endswith("=") or re.search(r"\breturn\b", head):
        return False
    # parameter list, then qualifiers / override / noexcept / -> type / : initializers
    return re.search(r"\)\s*(?:const|volatile|&|&&|noexcept(?:\([^)]*\))?|override|final|mutable|\s)*"
                     r"(?:->\s*[^{;]+|:\s*[^;]+)?$", head, re.S) is not None


def functions(path):
    """(name line, end line, first line of the head) of each function definition in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    stack = []  # per open brace: "container", "function" or "block"
    head_start = 0
    for i, c in enumerate(text):
        if c == "{":
            head = text[head_start:i]
            if all(k == "container" for k in stack):
                # drop preprocessor lines from the head
                head_clean = "\n".join(l for l in head.split("\n") if not l.strip().startswith("#"))
                if CONTAINER.search(head_clean):
                    stack.append("container")
                elif is_function_head(head_clean):
                    stack.append(("function", i, head_clean))
                else:
                    stack.append("block")
            else:
                stack.append("block")
            head_start = i + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if isinstance(top, tuple):
                    _, at, head = top
                    # the line of the name: the last line of the head holding the parameter list's start
                    name_at = text.rfind("(", 0, at)
                    m = re.search(r"[\w~>\]]\s*\(", head)
                    start_offset = at - len(head) + (m.start() if m else 0)
                    start_line = text.count("\n", 0, start_offset) + 1
                    end_line = text.count("\n", 0, i) + 1
                    found.append((start_line, end_line, head.strip().split("\n")[-1].strip()[:80]))
            head_start = i + 1
        elif c == ";":
            if all(k == "container" for k in stack):
                head_start = i + 1
    return found


def scan(src):
    out = []
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith(SOURCES):
                path = os.path.join(dirpath, name)
                for start, end, head in functions(path):
                    out.append((end - start + 1, os.path.relpath(path, src), start, head))
    return sorted(out, reverse=True)


def self_test():
    body = "\n".join(f"  x += {i};" for i in range(98))
    code = ("namespace a {\nstruct S {\n  int f() const {\n    return 1;\n  }\n};\n"
            "int long_one(int x)\n{\n" + body + "\n}\n"  # 1 + 1 + 98 + 1 = 101 lines
            "int short_one(int x) { return x; }\nconstexpr int t[] = {1, 2};\n}  // namespace a\n")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "x.cpp"), "w") as f:
            f.write(code)
        got = scan(tmp)
    lengths = {head.split("(")[0].split()[-1]: n for n, _, _, head in got}
    if lengths != {"long_one": 101, "f": 3, "short_one": 1}:
        print(f"self-test: measured {lengths}, expected long_one 101, f 3, short_one 1")
        return 1
    print("self-test: the planted 101-line function measured 101 lines")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    limit, listing, rest = 100, 0, []
    it = iter(argv[1:])
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--list":
            listing = int(next(it))
        else:
            rest.append(a)
    src = rest[0] if rest else os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    found = scan(src)
    for n, path, line, head in found[:listing]:
        print(f"{n:5} {path}:{line} {head}")
    over = [f for f in found if f[0] > limit]
    for n, path, line, head in over:
        print(f"{path}:{line}: {n} lines, over {limit}: {head}")
    if over:
        return 1
    print(f"{len(found)} functions under src/, none over {limit} lines (the longest {found[0][0] if found else 0})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
