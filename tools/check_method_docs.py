#!/usr/bin/env python3
"""Checks that docs/methods.md's option tables are what `vkspec methods --markdown` prints.

usage: check_method_docs.py VKSPEC_BINARY DOCS_FILE [--write]
--write replaces the generated block with the binary's output instead of comparing.
"""
import subprocess
import sys

BEGIN = "<!-- generated: vkspec methods --markdown (do not edit by hand) -->\n"
END = "<!-- end of generated options -->\n"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, docs = sys.argv[1], sys.argv[2]
    generated = subprocess.run([binary, "methods", "--markdown"], check=True, capture_output=True, text=True).stdout
    text = open(docs, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        print(f"{docs}: no generated options block (markers {BEGIN.strip()} ... {END.strip()})", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    if "--write" in sys.argv[3:]:
        with open(docs, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + generated + END + tail)
        return 0
    if current != generated:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), generated.splitlines(True),
                                                   docs, "vkspec methods --markdown"))
        print(f"{docs}: the option tables differ from the registry; regenerate with\n"
              f"  tools/check_method_docs.py {binary} {docs} --write", file=sys.stderr)
        return 1
    print(f"{docs}: option tables match the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
