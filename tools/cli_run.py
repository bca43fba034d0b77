"""Running vkspec from the tools' CLI tests: a validation-layer message fails the test (every
Vulkan test runs with the layer on), and so does a non-zero exit unless the test expects one."""
import subprocess
import sys

_VALIDATION_MARKS = ("VUID-", "Validation Error", "SYNC-HAZARD")


def checked(r, args, expect_ok=True):
    """r: a finished subprocess.run of args, with text output captured."""
    if r.stderr and any(mark in r.stderr for mark in _VALIDATION_MARKS):
        sys.exit(f"FAILED (validation message): {' '.join(args)}\n{r.stderr}")
    if expect_ok and r.returncode != 0:
        sys.exit(f"FAILED ({r.returncode}): {' '.join(args)}\n{r.stdout}\n{r.stderr}")
    return r


def run(args, cwd=None, expect_ok=True, timeout=600):
    return checked(subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd), args, expect_ok)
