#!/usr/bin/env python3
"""The progress of `vkspec generate` and `vkspec bench` on stderr, on the shipped 8x8 model: in a
log (stderr a pipe) one plain line per tenth of the images, counting up to the total with images/s
and the time left or taken; on a terminal (stderr a pseudo-terminal) a bar redrawn in place
(carriage returns, no line per image) ending with the total and one newline.

usage: test_progress.py VKSPEC_BINARY ASSETS_DIR
"""
import os
import pty
import re
import subprocess
import sys
import tempfile
import threading

from cli_run import checked, run

LINE = re.compile(r"^(generate ar|bench ar \(run 1/1\)): (\d+)/(\d+) images, [0-9.e+]+ images/s, (ETA|took) \d+:\d\d$")


def in_a_log(args):
    return run(args).stderr


def on_a_terminal(args):
    """stderr of `args` run with a pseudo-terminal as stderr (read while it runs: the buffer is small)."""
    master, slave = pty.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the slave side closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=600)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    r.stderr = b"".join(chunks).decode(errors="replace")
    return checked(r, args).stderr


def log_failures(name, stderr, total):
    lines = [l for l in stderr.splitlines() if l.startswith(name.split(" ")[0] + " ")]
    counts = []
    for l in lines:
        m = LINE.match(l)
        if not m or int(m.group(3)) != total:
            return [f"{name}: unexpected progress line {l!r}"]
        counts.append(int(m.group(2)))
    failures = []
    if "\r" in stderr:
        failures.append(f"{name}: carriage returns in a log")
    if not counts or counts[-1] != total or counts != sorted(set(counts)) or len(counts) > 10:
        failures.append(f"{name}: progress counts {counts} for {total} images (at most ten, rising, ending at the total)")
    if lines and "took" not in lines[-1]:
        failures.append(f"{name}: the last line does not say how long it took: {lines[-1]!r}")
    return failures


def main():
    vkspec, assets = sys.argv[1], sys.argv[2]
    model = os.path.join(assets, "fmnist_gpt8.safetensors")
    failures = []
    with tempfile.TemporaryDirectory() as d:
        generate = [vkspec, "generate", "--model", model, "--images", "3", "--out", os.path.join(d, "g.png")]
        failures += log_failures("generate ar", in_a_log(generate), 3)
        bench = [vkspec, "bench", "--model", model, "--images", "12", "--warmup", "0", "--classifier", "none"]
        failures += log_failures("bench ar (run 1/1)", in_a_log(bench), 12)
        tty = on_a_terminal(generate)
        final = "generate ar [########################] 3/3 images"
        if tty.count("\r") < 3 or final not in tty or tty.count("\n") != 1 or not tty.rstrip().endswith("\x1b[K"):
            failures.append(f"generate on a terminal: {tty[-400:]!r}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("OK: progress lines in a log, a redrawn bar on a terminal")


if __name__ == "__main__":
    main()
