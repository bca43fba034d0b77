#!/usr/bin/env python3
"""Fails when a tracked file names an absolute path of a particular machine (a checkout, a home
or root folder, a device machine's output folder): the repository must stand alone, so commands
and recorded outputs name paths relative to the checkout ($OUT for a device run's output).
System paths (/usr, /etc, /tmp, /dev, /proc) are fine.

usage: check_machine_paths.py [REPO]   (default: this checkout; lists every offending line)
"""
import os
import re
import subprocess
import sys

MACHINE = re.compile(r"(?<![\w.$])(/work/|/root/|/home/\w|/Users/\w)")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    bad, checked = [], 0
    for rel in files.decode().split("\0"):
        if not rel or rel == "tools/check_machine_paths.py":
            continue
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files (assets) and submodules
        checked += 1
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE.search(line):
                bad.append(f"{rel}:{number}: {line.strip()[:160]}")
    if bad:
        print("absolute paths of a machine in tracked files:\n" + "\n".join(bad))
        return 1
    print(f"{checked} text files, no absolute path of a machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
