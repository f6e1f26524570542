#!/usr/bin/env python3
"""Keeps the data path's layering: every `#include "..."` under src/ may name only a file of a
lower layer, or of its own folder. Prints each include that runs the other way (the file, its
line and the include) and exits 1; exits 0 when there is none.

    check_include_order.py [SRC_DIR]          check a tree (default: this repository's src/)
    check_include_order.py --self-test        a tree with one upward include must fail

The order, from the bottom up, is written here once. Folders in the same layer are peers that
never include each other (the two frontends meet only in the core)."""
import os
import re
import sys
import tempfile

LAYERS = [
    ["common/support"],
    ["common/record"],
    ["common/timeline"],
    ["common/analysis"],
    ["common/formats"],
    # The HTML report: a format the session writes like the others, built on the formats' events.
    # Its own folder outside common/ (the project's layout names src/report/), one layer up.
    ["report"],
    ["common/session"],
    ["kokkos_hooks", "ompt_backend", "mpi_layer"],
    ["kob"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".cc", ".in")


def folder_of(rel):
    """The layer folder holding a path relative to src/ and its layer index, or (None, None)."""
    for index, folders in enumerate(LAYERS):
        for folder in folders:
            if rel == folder or rel.startswith(folder + "/"):
                return folder, index
    return None, None


def check(src):
    problems = []
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            folder, layer = folder_of(rel)
            if folder is None:
                problems.append(f"{rel}: in no layer folder (add its folder to LAYERS in {os.path.basename(__file__)})")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                # Includes name a path under src/ (or its build twin for generated headers); a bare
                # name is looked for beside the including file.
                if "/" not in target and os.path.exists(os.path.join(dirpath, target)):
                    target = os.path.relpath(os.path.join(dirpath, target), src)
                t_folder, t_layer = folder_of(target)
                if t_folder is None:
                    problems.append(f"{rel}:{line}: #include \"{m.group(1)}\" is in no layer folder")
                elif t_folder == folder:
                    continue
                elif t_layer == layer:
                    problems.append(f"{rel}:{line}: #include \"{m.group(1)}\": {folder} and {t_folder} are peers "
                                    "and must not include each other")
                elif t_layer > layer:
                    problems.append(f"{rel}:{line}: #include \"{m.group(1)}\" runs upward: {folder} is below {t_folder}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory(prefix="kob-include-order-") as src:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w") as f:
                f.write(text)
        write("common/support/log.hpp", "#pragma once\n")
        write("common/session/session.hpp", '#include "common/support/log.hpp"\n')
        write("common/record/recorder.cpp", '#include "common/support/log.hpp"\n#include "common/session/session.hpp"\n')
        write("kokkos_hooks/events.hpp", '#include "ompt_backend/device.hpp"\n')
        write("ompt_backend/device.hpp", '#include "common/session/session.hpp"\n')
        found = check(src)
        want = ['common/record/recorder.cpp:2: #include "common/session/session.hpp" runs upward',
                'kokkos_hooks/events.hpp:1: #include "ompt_backend/device.hpp": kokkos_hooks and ompt_backend are peers']
        ok = len(found) == 2 and all(any(p.startswith(w) for p in found) for w in want)
        print("\n".join(found))
        print("self-test: the upward and the peer include were found" if ok else "FAIL: self-test expected exactly: " + "; ".join(want))
        return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    src = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    problems = check(src)
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: {len(problems)} include(s) against the layer order")
        return 1
    print("every include under src/ runs downward")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
