"""Smoke test of tools/torch_bench.py on the tiny shape (CPU, a few seconds): it runs, writes the
C++ bench's field names, and --compare divides vkspec's times by its own."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch  # noqa: F401
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_bench.py")


class TorchBenchTest(unittest.TestCase):
    def run_bench(self, *extra):
        return subprocess.run([sys.executable, BENCH, "--shape", "tiny", "--device", "cpu", "--windows", "1,4",
                               "--repeat", "1", "--no-compile", *extra], capture_output=True, text=True, timeout=120)

    def test_tiny_shape_writes_the_cpp_field_names_and_compares(self):
        with tempfile.TemporaryDirectory() as d:
            # The fields torch_bench reads from a `vkspec bench --synthetic --json` file.
            vk = {"shape": "tiny", "grid": 16, "device": "test", "clock": "wall",
                  "ar_step": {"queries": 1, "ms": 2.0, "busy_ms": 1.0},
                  "windows": [{"window": 1, "ms": 2.0, "busy_ms": 1.0}, {"window": 4, "ms": 3.0, "busy_ms": 1.5}]}
            with open(os.path.join(d, "vk.json"), "w") as f:
                json.dump(vk, f)
            out = os.path.join(d, "torch.json")
            p = self.run_bench("--json", out, "--compare", os.path.join(d, "vk.json"))
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                j = json.load(f)
        self.assertEqual((j["shape"], j["grid"], j["batch_rows"], j["kv_tokens"]), ("tiny", 16, 2, 128))
        eager = j["runs"][0]
        self.assertEqual(eager["impl"], "eager")
        self.assertEqual((eager["ar_step"]["queries"], eager["ar_step"]["kv_len"]), (1, 130))
        self.assertEqual([w["window"] for w in eager["windows"]], [1, 4])
        self.assertGreater(eager["windows"][1]["ms"], 0)
        rows = j["compare"]["rows"]
        self.assertEqual([r["queries"] for r in rows], [1, 4])
        self.assertAlmostEqual(rows[1]["ratio_eager"], 3.0 / rows[1]["eager_ms"])
        self.assertAlmostEqual(j["compare"]["busy_rows"][1]["ratio_eager"], 1.5 / eager["windows"][1]["busy_ms"])

    def test_bad_options_are_errors(self):
        p = self.run_bench("--windows", "1,500")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--windows", p.stderr)


if __name__ == "__main__":
    unittest.main()
