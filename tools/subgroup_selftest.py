#!/usr/bin/env python3
"""`vkspec selftest` (every op against the CPU reference) on lavapipe at a chosen subgroup size,
optionally with the kernels a GPU takes (VKSPEC_GPU_KERNELS=1). lavapipe's subgroup is its
native vector width in 32-bit lanes, so LP_NATIVE_VECTOR_WIDTH=32 * SIZE sets it: 128 -> 4,
256 -> 8 (the default on AVX2), 512 -> 16. The size the device reports (`vkspec devices
--json`) is checked first, so the test never passes at another size than it names. The width is
forced only where SIZE is not the native one: a forced width gets a Mesa shader cache of its own
(engine/vk/mesa_shader_cache.h), so forcing the native width would compile again every pipeline
that the other tests' cache already holds (most of them under --gpu-kernels too). CTests
cli.selftest_subgroup4, cli.selftest_subgroup16 and cli.selftest_gpu_kernels; exits 77 (skipped)
where no lavapipe device is present.

SIZE 32 (1024, CTest cli.selftest_subgroup32_refused) checks the opposite: Mesa's lavapipe (22.3
and 25.0) reports 32 lanes there but runs 16, so every kernel sized by the reported width writes
past its shared arrays (glibc aborts with a heap corruption on 25.0). vkspec must refuse the device
with one clear line instead.

usage: subgroup_selftest.py VKSPEC_BINARY SUBGROUP_SIZE [--gpu-kernels]
"""
import json
import os
import subprocess
import sys


# The first lavapipe device `vkspec devices --json` lists in this environment, or None.
def lavapipe_device(binary, env):
    r = subprocess.run([binary, "devices", "--json"], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAILED: vkspec devices --json exited with {r.returncode}\n{r.stderr}")
    return next((d for d in json.loads(r.stdout) if d.get("driver_name") == "llvmpipe"), None)


def main():
    args = [a for a in sys.argv[1:] if a != "--gpu-kernels"]
    if len(args) != 2 or not args[1].isdigit():
        sys.exit(__doc__)
    binary, size = args[0], int(args[1])
    env = dict(os.environ)
    env.pop("LP_NATIVE_VECTOR_WIDTH", None)
    # Two ctest jobs and other load can stretch one check's dispatch past the default 60 s fence
    # limit at subgroup 16 (seen at load 17); ctest's own timeout still catches a hang.
    env.setdefault("VKSPEC_FENCE_TIMEOUT_MS", "600000")
    # vkspec gives each forced width a Mesa shader cache of its own (engine/vk/mesa_shader_cache.h).
    env.pop("VKSPEC_GPU_KERNELS", None)
    if "--gpu-kernels" in sys.argv:
        env["VKSPEC_GPU_KERNELS"] = "1"

    dev = lavapipe_device(binary, env)
    if dev and dev["subgroup"]["size"] != size:
        env["LP_NATIVE_VECTOR_WIDTH"] = str(32 * size)
        dev = lavapipe_device(binary, env)
    if not dev:
        print("SKIP: no lavapipe (llvmpipe) Vulkan device")
        return 77
    sg = dev["subgroup"]
    print(f"device {dev['index']}: {dev['name']}, subgroup size {sg['size']} "
          f"({sg['min_size']}-{sg['max_size']}), LP_NATIVE_VECTOR_WIDTH={env.get('LP_NATIVE_VECTOR_WIDTH', 'native')}"
          f"{', VKSPEC_GPU_KERNELS=1' if 'VKSPEC_GPU_KERNELS' in env else ''}", flush=True)
    if (sg["size"], sg["min_size"], sg["max_size"]) != (size, size, size):
        sys.exit(f"FAILED: the device reports subgroup size {sg['size']} ({sg['min_size']}-{sg['max_size']}), "
                 f"not {size}")

    if size == 32:
        r = subprocess.run([binary, "selftest", "--device", str(dev["index"]), "--op", "rms_norm"], env=env,
                           capture_output=True, text=True, timeout=300)
        print(r.stdout + r.stderr)
        if r.returncode == 0 or "runs 16" not in r.stdout or r.returncode < 0:
            sys.exit("FAILED: expected the device refused with 'reports subgroups of 32 lanes but runs 16'")
        return 0
    r = subprocess.run([binary, "selftest", "--device", str(dev["index"])], env=env, timeout=900)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
