#!/usr/bin/env python3
"""Keeps the README and docs/ honest: the README is a user guide of at most 600 lines with a
contents list; every relative link in README.md and docs/*.md reaches a file (and, with #anchor,
a heading of it); every file of docs/ is linked from the README; every repository path the
README names exists; and every `kob` command in the README's code blocks is a subcommand `kob`
accepts, given only options its `--help` lists. Prints each problem and exits 1; 0 when none.

    check_docs.py KOB [ROOT]          ROOT: the repository (default: this file's parent's parent)
    check_docs.py --self-test KOB     a README with a dead link and an unknown command must fail"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_README_LINES = 600
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
REPO_PATH = re.compile(r"(?<![\w./-])((?:scripts|benchmarks|tests|samples|src|docs)/[\w./-]*[\w])")


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.M)}


def check_links(root, md, problems):
    with open(md, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    rel = os.path.relpath(md, root)
    targets = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+:", target):  # https:, mailto:, file:
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        targets.append(full)
        if not os.path.exists(full):
            problems.append(f"{rel}: dead link {target}")
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            problems.append(f"{rel}: link {target}: no heading with anchor #{anchor} in {os.path.relpath(full, root)}")
    return targets


def help_options(kob, sub, cache={}):
    """The options `kob SUB --help` lists, or None when SUB is not a subcommand."""
    if sub not in cache:
        r = subprocess.run([kob, sub, "--help"], capture_output=True, text=True, timeout=60)
        text = r.stdout + r.stderr
        cache[sub] = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", text)) if r.returncode == 0 else None
    return cache[sub]


def check_commands(kob, readme_text, problems):
    for block in FENCE.findall(readme_text):
        for line in block.splitlines():
            line = line.split("  #")[0]
            if line.lstrip().startswith("#"):  # a comment
                continue
            for m in re.finditer(r"(?:^|[\s/;&|(])kob\s+([a-z-]+)((?:\s+\S+)*)", line):
                sub, rest = m.group(1), m.group(2).split()
                if sub.startswith("-"):
                    if sub not in ("--help", "--version"):
                        problems.append(f"README: `kob {sub}`: not an option of kob")
                    continue
                opts = help_options(kob, sub)
                if opts is None:
                    problems.append(f"README: `kob {sub}`: not a kob command (kob {sub} --help failed)")
                    continue
                for word in rest:
                    if word == "--" or word in ("&&", "||", "|", ";", "\\"):
                        break  # the program's arguments, or the next command
                    if not word.startswith("-") or word.startswith("-n"):
                        if sub == "run" and not word.startswith("-"):
                            break  # kob run: the program starts at its first non-option
                        continue
                    name = word.split("=")[0].rstrip(".")
                    if name not in opts:
                        problems.append(f"README: `kob {sub} ... {word}`: {name} is not in `kob {sub} --help`")


def check(kob, root):
    problems = []
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    lines = text.count("\n")
    if lines > MAX_README_LINES:
        problems.append(f"README: {lines} lines, more than {MAX_README_LINES}: move the details to docs/")
    if not re.search(r"^## Contents\n(\n?- \[[^\]]+\]\(#[^)]+\)\n)+", text, re.M):
        problems.append("README: no contents list (## Contents with a linked line per section)")
    linked = set(check_links(root, readme, problems))
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            check_links(root, os.path.join(docs, name), problems)
            if os.path.join(docs, name) not in linked:
                problems.append(f"README: docs/{name} is not linked")
    for m in REPO_PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if "*" in path or "<" in path:  # a pattern, not a path
            continue
        if not os.path.exists(os.path.join(root, path)):
            problems.append(f"README: names {path}, which does not exist")
    check_commands(kob, text, problems)
    return problems


def self_test(kob, root):
    with tempfile.TemporaryDirectory(prefix="kob-docs-") as tmp:
        shutil.copytree(os.path.join(root, "docs"), os.path.join(tmp, "docs"))
        for name in ("scripts", "benchmarks", "tests", "samples", "src"):
            os.symlink(os.path.join(root, name), os.path.join(tmp, name))
        with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
            text = f.read()
        text += "\n[gone](docs/no-such-file.md)\n\n```sh\nkob frobnicate run1\nkob convert run1 --to-all\n```\n"
        with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as f:
            f.write(text)
        got = check(kob, tmp)
    want = ["dead link docs/no-such-file.md", "names docs/no-such-file.md", "`kob frobnicate`: not a kob command",
            "--to-all is not in `kob convert --help`"]
    missing = [w for w in want if not any(w in p for p in got)]
    if missing:
        print(f"self-test: the check missed {missing} (it said {got})")
        return 1
    extra = [p for p in got if not any(w in p for w in want)]
    if extra:
        print(f"self-test: problems that were not planted: {extra}")
        return 1
    print(f"self-test: the {len(got)} planted problems found: {got}")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "--self-test":
        root = argv[3] if len(argv) > 3 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return self_test(argv[2], root)
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[2] if len(argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(argv[1], root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("README and docs: every link, path and kob command holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
