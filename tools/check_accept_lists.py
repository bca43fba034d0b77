#!/usr/bin/env python3
"""The docs' lists of the methods that take an acceptance rule stay complete: every paragraph
marked `<!-- accept-list: ... -->` (README.md, docs/usage.md, docs/methods.md,
docs/architecture.md each have at least one) must name every method whose options, as
`vkspec methods` lists them, include --accept. A method that gains --accept and a list that
forgets it fail here (CTest docs.accept_lists).

usage: check_accept_lists.py VKSPEC [REPO]   (VKSPEC: the built binary)
"""
import os
import re
import subprocess
import sys

DOCS = ["README.md", "docs/usage.md", "docs/methods.md", "docs/architecture.md"]
MARKER = "<!-- accept-list"


def methods_taking_accept(binary):
    out = subprocess.run([binary, "methods"], check=True, capture_output=True, text=True).stdout
    takers, method = set(), None
    for line in out.splitlines():
        m = re.match(r"^([a-z][a-z0-9+-]*)\s+\(", line)
        if m:
            method = m.group(1)
        elif method and re.match(r"^\s+--accept\s", line):
            takers.add(method)
    return takers


def marked_paragraphs(path):
    """The text after each marker up to the next blank line."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(re.escape(MARKER), text):
        end = text.find("\n\n", m.end())
        yield text.count("\n", 0, m.start()) + 1, text[m.end():end if end >= 0 else len(text)]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    takers = methods_taking_accept(sys.argv[1])
    if len(takers) < 2:
        print(f"vkspec methods lists {sorted(takers)} as taking --accept: the listing's format changed?")
        return 1
    problems, lists = [], 0
    for doc in DOCS:
        found = 0
        for line, para in marked_paragraphs(os.path.join(root, doc)):
            found += 1
            missing = [m for m in sorted(takers) if not re.search(r"(?<![\w-])" + re.escape(m) + r"(?![\w+-])", para)]
            if missing:
                problems.append(f"{doc}:{line}: the list after the marker lacks {', '.join(missing)}")
        if not found:
            problems.append(f"{doc}: no {MARKER} marker before its list of the methods that take --accept")
        lists += found
    if problems:
        print("\n".join(problems))
        return 1
    print(f"{lists} lists in {len(DOCS)} files name all of {', '.join(sorted(takers))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
