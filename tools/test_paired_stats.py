"""tools/paired_stats.py on hand-made sample files: it pairs by seed (not by row), computes the
paired difference and its standard error, and refuses a seed counted twice or runs with no seed
in common."""
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import save_file  # noqa: E402

TOOL = os.path.join(HERE, "paired_stats.py")


def write_run(path, method, options, seeds, nfe, predicted):
    n = len(seeds)
    save_file({"seed": torch.tensor(seeds, dtype=torch.int64),
               "class": torch.tensor([s % 10 for s in seeds], dtype=torch.int64),
               "predicted": torch.tensor(predicted, dtype=torch.int64),
               "nfe": torch.tensor(nfe, dtype=torch.int64),
               "tokens": torch.zeros(n, 4, dtype=torch.int32)},
              path, {"format": "vkspec-samples-1", "method": method, "options": options})


class PairedStatsTest(unittest.TestCase):
    def run_tool(self, a, b):
        return subprocess.run([sys.executable, TOOL, a, b], capture_output=True, text=True, timeout=60)

    def test_pairs_by_seed_across_files(self):
        with tempfile.TemporaryDirectory() as d:
            a = os.path.join(d, "a.safetensors")
            b1, b2 = os.path.join(d, "b1.safetensors"), os.path.join(d, "b2.safetensors")
            # A: seeds 0..3 with NFE 10, 20, 30, 40; all correct (class = seed mod 10).
            write_run(a, "scd-mc", "window=32", [0, 1, 2, 3], [10, 20, 30, 40], [0, 1, 2, 3])
            # B in two files, rows in another order, one seed A lacks: differences -1, -3 on 0, 1, 2.
            write_run(b1, "scd-mc", "init=heads", [2, 0], [27, 9], [2, 5])
            write_run(b2, "scd-mc", "init=heads", [1, 7], [17, 99], [1, 7])
            p = self.run_tool(a, b1 + "," + b2)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("common seeds: 3 (0..2)", p.stdout)
        # Differences -1, -3, -3: mean -2.33, SE sqrt(1.333 / 3) = 0.67.
        self.assertIn("NFE: A 20.00, B 17.67; B - A -2.33 +- 0.67 (SE)", p.stdout)
        self.assertIn("class accuracy (3 judged): A 100.0 %, B 66.7 %; B - A -33.3 +- 33.3 points", p.stdout)

    def test_refuses_a_repeated_seed_and_disjoint_runs(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, f"{x}.safetensors") for x in "abc")
            write_run(a, "ar", "", [0, 1], [256, 256], [0, 1])
            write_run(b, "ar", "", [1, 2], [256, 256], [1, 2])
            write_run(c, "sjd", "", [5], [80], [5])
            twice = self.run_tool(a + "," + b, c)
            disjoint = self.run_tool(a, c)
            other_settings = self.run_tool(a + "," + c, a)
        self.assertEqual(twice.returncode, 1)
        self.assertIn("seed 1 appears twice", twice.stderr)
        self.assertEqual(disjoint.returncode, 1)
        self.assertIn("share no seed", disjoint.stderr)
        self.assertNotEqual(other_settings.returncode, 0)
        self.assertIn("holds 'sjd'", other_settings.stderr)


if __name__ == "__main__":
    unittest.main()
