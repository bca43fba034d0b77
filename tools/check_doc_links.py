#!/usr/bin/env python3
"""Checks the relative links of Markdown files: each must name a file or folder inside the
repository, and a `#fragment` must name a heading of the file it points to (GitHub's anchors).
Web links (http, https, mailto) are left alone.

usage: check_doc_links.py [FILE.md ... | --all]   (default: README.md docs/usage.md docs/architecture.md;
       --all: every Markdown file git tracks)
Exits 1 and lists every broken link, else prints how many links it checked.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["README.md", "docs/usage.md", "docs/architecture.md"]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """The file's lines outside fenced code blocks, with inline code blanked out."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, re.sub(r"`[^`]*`", "", line)


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, found = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = anchor(m.group(2))
        n = seen.get(a, 0)
        seen[a] = n + 1
        found.add(a if n == 0 else f"{a}-{n}")
    return found


def check(doc):
    """(links checked, problems) of one Markdown file, paths relative to the repository."""
    path = os.path.join(ROOT, doc)
    problems, count = [], 0
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            count += 1
            where = f"{doc}:{number}: {target}"
            file_part, _, fragment = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if os.path.commonpath([dest, ROOT]) != ROOT:
                problems.append(f"{where}: leaves the repository")
            elif not os.path.exists(dest):
                problems.append(f"{where}: no such file")
            elif fragment and (not dest.endswith(".md") or fragment not in anchors(dest)):
                problems.append(f"{where}: no heading #{fragment}")
    return count, problems


def main():
    docs = sys.argv[1:] or DEFAULT
    if docs == ["--all"]:  # every tracked Markdown file
        import subprocess
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], check=True, capture_output=True, text=True)
        docs = out.stdout.split()
    total, problems = 0, []
    for doc in docs:
        n, p = check(os.path.relpath(os.path.abspath(doc), ROOT) if os.path.isabs(doc) else doc)
        total += n
        problems += p
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"{total} relative links in {len(docs)} files, all inside the repository and resolving")
    return 0


if __name__ == "__main__":
    sys.exit(main())
