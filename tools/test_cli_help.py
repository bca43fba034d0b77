#!/usr/bin/env python3
"""`vkspec <command> --help` and `vkspec --version`: every command of the global usage prints its
usage and options and exits 0; the options it lists are the ones its parser accepts (none is
refused as unknown, checked on generate and bench, whose tables are assembled from several
parts) and include every method option of `vkspec methods`; --version prints project()'s
version. Nothing here opens a device.

usage: test_cli_help.py VKSPEC_BINARY SOURCE_DIR
"""
import os
import re
import subprocess
import sys

# A few options per command that its help must list.
EXPECTED = {
    "generate": ["--method", "--images", "--seed", "--class", "--out", "--trace", "--model", "--cfg",
                 "--caption-embeddings", "--prompt"],
    "bench": ["--methods", "--images", "--samples", "--report", "--json", "--profile", "--synthetic", "--windows",
              "--classifier", "--prompts"],
    "methods": ["--markdown"],
    "families": ["--model"],
    "devices": ["--json"],
    "selftest": ["--device", "--op", "--json"],
    "bench-ops": ["--json", "--op", "--repeat"],
    "bench-text-encoder": ["--model", "--synthetic", "--tokens", "--repeat", "--json"],
}


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def listed_options(text):
    """{name: value or None} of the option lines of a help text."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"^  (--[a-z0-9-]+)(?: (\S+))?", line)
        if m:
            found.setdefault(m.group(1), m.group(2))
    return found


def commands_of(usage):
    body = usage.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*) ", body, re.M)]


def unknown_to_parser(vkspec, command, prefix, name, value):
    """The parser's verdict on one listed option; `prefix` makes the command fail right after parsing."""
    r = run([vkspec, command] + prefix + [name] + ([] if value is None else ["x"]))
    return r.returncode != 0 and "unknown option" in r.stderr


def main():
    vkspec, source = sys.argv[1], sys.argv[2]
    failures = []
    usage = run([vkspec, "--help"])
    if usage.returncode != 0:
        failures.append(f"vkspec --help: exit {usage.returncode}")
    commands = commands_of(usage.stdout)
    if sorted(commands) != sorted(EXPECTED):
        failures.append(f"commands in the usage: {commands}, expected {sorted(EXPECTED)}")
    method_options = set(re.findall(r"^    (--[a-z0-9-]+)", run([vkspec, "methods"]).stdout, re.M))
    helps = {}
    for command in commands:
        for flag in ("--help", "-h"):
            r = run([vkspec, command, flag])
            if r.returncode != 0 or not r.stdout.startswith(f"usage: vkspec {command}"):
                failures.append(f"{command} {flag}: exit {r.returncode}, output {r.stdout[:80]!r} {r.stderr[:200]!r}")
        helps[command] = listed_options(run([vkspec, command, "--help"]).stdout)
        missing = [o for o in EXPECTED.get(command, []) if o not in helps[command]]
        if missing:
            failures.append(f"{command} --help does not list {missing}")
    for command in ("generate", "bench"):
        missing = sorted(method_options - set(helps.get(command, {})))
        if missing:
            failures.append(f"{command} --help lacks the method options {missing}")
    # Help comes before parsing: other options, even bad ones, do not stop it.
    r = run([vkspec, "generate", "--images", "-3", "--help"])
    if r.returncode != 0 or "--images" not in r.stdout:
        failures.append(f"generate --images -3 --help: exit {r.returncode}")
    synthetic = {"--synthetic", "--grid", "--windows", "--repeat", "--nfe"}
    for name, value in helps.get("generate", {}).items():
        if unknown_to_parser(vkspec, "generate", ["--images", "0"], name, value):
            failures.append(f"generate --help lists {name}, the parser refuses it")
    for name, value in helps.get("bench", {}).items():
        prefix = ["--synthetic", "tiny", "--grid", "17"] if name in synthetic else ["--images", "0"]
        if unknown_to_parser(vkspec, "bench", prefix, name, value):
            failures.append(f"bench --help lists {name}, the parser refuses it")
    if not unknown_to_parser(vkspec, "generate", ["--images", "0"], "--colour", "red"):
        failures.append("generate --colour red is not refused as an unknown option")
    project = open(os.path.join(source, "CMakeLists.txt")).read()
    version = re.search(r"project\(vkspec VERSION (\S+)", project).group(1)
    r = run([vkspec, "--version"])
    if r.returncode != 0 or r.stdout.strip() != f"vkspec {version}":
        failures.append(f"--version: exit {r.returncode}, {r.stdout!r}, expected 'vkspec {version}'")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print(f"OK: {len(commands)} commands, {sum(len(h) for h in helps.values())} options listed, version {version}")


if __name__ == "__main__":
    main()
