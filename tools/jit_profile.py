#!/usr/bin/env python3
"""Where lavapipe's JIT-compiled shader code spends its time, down to the instruction.

llvmpipe compiles every shader to x86 at run time into anonymous executable memory, which perf
samples but cannot name or disassemble. This runs a command, samples it with perf once it is warm,
copies the JIT pages out of the live process with gdb, disassembles them with objdump and prints
(1) the share of samples per shared object (JIT, kernel, driver), (2) the instruction mix weighted
by samples, and (3) the hottest stretch of code with each instruction's share, which is how the
loop llvmpipe builds for subgroupBroadcast was found (docs/perf.md, "Lane reads on lavapipe").

The command must still be running when sampling ends, so give it work enough (e.g. `vkspec
bench-ops --op matmul --repeat 400`); it is killed afterwards. Needs perf, gdb and objdump
(`tools/install-deps.sh --profiling`) and ptrace rights over the child (root, or
kernel.yama.ptrace_scope = 0).

  tools/jit_profile.py [--warm S] [--seconds S] [--window N] [--mix N] [--dump FILE] -- COMMAND ARGS...
"""
import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def jit_ranges(pid):
    """Anonymous executable mappings of pid (the JIT code), as (start, end)."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 5 and "x" in fields[1] and fields[3] == "00:00":
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out.append((start, end))
    return out


def disassemble(pid, ranges, tmp):
    """{address: instruction text} of the JIT code, copied out of the live process with gdb."""
    ins = {}
    for i, (start, end) in enumerate(ranges):
        blob = os.path.join(tmp, f"jit{i}.bin")
        subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", f"dump binary memory {blob} {start:#x} {end:#x}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if not os.path.exists(blob):
            print(f"jit_profile: could not copy {start:#x}-{end:#x} (ptrace rights?)", file=sys.stderr)
            continue
        asm = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f"--adjust-vma={start:#x}", blob],
                             capture_output=True, text=True, check=True).stdout
        for line in asm.splitlines():
            m = re.match(r"\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(\S.*)", line)
            if m:
                ins[int(m.group(1), 16)] = m.group(2).strip()
    return ins


def samples(perf_data, sort):
    """[(percent, key)] from perf report sorted by `sort` (dso or sym)."""
    rep = subprocess.run(["perf", "report", "-i", perf_data, "--sort", sort, "--stdio"], capture_output=True,
                         text=True, check=False).stdout
    rows = []
    for line in rep.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(.*\S)", line)
        if m and not line.lstrip().startswith("#"):
            rows.append((float(m.group(1)), m.group(2)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warm", type=float, default=6.0, help="seconds before sampling (shader compiles) (default 6)")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds of sampling (default 4)")
    ap.add_argument("--window", type=int, default=60, help="instructions in the hottest stretch shown (default 60)")
    ap.add_argument("--mix", type=int, default=20, help="instructions in the mix shown (default 20)")
    ap.add_argument("--dump", help="also write every JIT instruction with its share of samples to this file")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command (put it after --)")
    for tool in ("perf", "gdb", "objdump"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"jit_profile: {tool} not found (tools/install-deps.sh --profiling)")
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(a.warm)
        if child.poll() is not None:
            sys.exit(f"jit_profile: the command ended (exit {child.returncode}) before sampling; give it more work")
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "perf.data")
            subprocess.run(["perf", "record", "-q", "-o", data, "-F", "5000", "-p", str(child.pid), "--", "sleep",
                            str(a.seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if child.poll() is not None:
                sys.exit("jit_profile: the command ended during sampling, before its code could be copied")
            ins = disassemble(child.pid, jit_ranges(child.pid), tmp)
            print("samples by shared object:")
            for pct, dso in samples(data, "dso")[:6]:
                print(f"  {pct:6.2f}%  {dso}")
            hot = {}
            for pct, sym in samples(data, "sym"):
                m = re.search(r"\[\.\]\s+0x([0-9a-f]+)$", sym)
                if m and int(m.group(1), 16) in ins:
                    hot[int(m.group(1), 16)] = pct
            if not hot:
                sys.exit("jit_profile: no samples in JIT code")
            mix = collections.Counter()
            for addr, pct in hot.items():
                mix[ins[addr].split()[0]] += pct
            print(f"\ninstruction mix of the JIT samples ({sum(hot.values()):.1f} % of all):")
            for op, pct in mix.most_common(a.mix):
                print(f"  {pct:6.2f}%  {op}")
            order = sorted(ins)
            if a.dump:
                with open(a.dump, "w") as f:
                    for addr in order:
                        f.write(f"{hot.get(addr, 0.0):6.2f}%  {addr:x}  {ins[addr]}\n")
            w = min(a.window, len(order))
            best, at, run = -1.0, 0, sum(hot.get(order[j], 0.0) for j in range(w))
            for i in range(len(order) - w + 1):
                if i:
                    run += hot.get(order[i + w - 1], 0.0) - hot.get(order[i - 1], 0.0)
                if run > best:
                    best, at = run, i
            print(f"\nhottest {w} instructions ({best:.1f} % of all samples):")
            for addr in order[at:at + w]:
                print(f"  {hot.get(addr, 0.0):6.2f}%  {addr:x}  {ins[addr]}")
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        child.wait()


if __name__ == "__main__":
    main()
