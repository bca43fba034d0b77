"""tools/feature_permutation_test.py on hand-made sample files: two runs drawn from one
class-conditional Gaussian are not told apart, a shifted class is, p never reaches 0, and runs
that disagree on a seed's class are refused."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import torch
except ImportError:  # CTest reports exit code 77 as skipped
    print("SKIP: PyTorch is not installed for this python (apt-get install python3-torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import save_file  # noqa: E402

TOOL = os.path.join(HERE, "feature_permutation_test.py")
DIM, IMAGES = 8, 400


def write_run(path, features, classes):
    n = len(features)
    save_file({"seed": torch.arange(n, dtype=torch.int64),
               "class": torch.tensor(classes, dtype=torch.int64),
               "features": torch.tensor(np.asarray(features), dtype=torch.float32)},
              path, {"format": "vkspec-samples-1", "method": "m", "options": ""})


def class_run(rng, shift=0.0):
    classes = [i % 4 for i in range(IMAGES)]
    means = np.eye(4, DIM) * 3.0
    feats = np.stack([means[c] + rng.standard_normal(DIM) for c in classes])
    feats[np.array(classes) == 1] += shift  # one class drawn elsewhere
    return feats, classes


class FeaturePermutationTest(unittest.TestCase):
    def p_value(self, a, b, permutations=200):
        r = subprocess.run([sys.executable, TOOL, a, b, "--permutations", str(permutations)],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return float(re.search(r"p = ([0-9.]+)", r.stdout).group(1))

    def test_same_distribution_passes_and_a_shift_fails(self):
        rng = np.random.default_rng(1)
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, f"{n}.safetensors") for n in "abc")
            write_run(a, *class_run(rng))
            write_run(b, *class_run(rng))
            write_run(c, *class_run(rng, shift=0.8))
            self.assertGreater(self.p_value(a, b), 0.05)
            p = self.p_value(a, c)
            self.assertLess(p, 0.02)
            self.assertGreater(p, 0.0)  # the +1 correction: at least 1 / (permutations + 1)

    def test_runs_that_disagree_on_classes_are_refused(self):
        rng = np.random.default_rng(2)
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.safetensors"), os.path.join(d, "b.safetensors")
            feats, classes = class_run(rng)
            write_run(a, feats, classes)
            write_run(b, feats, [(c + 1) % 4 for c in classes])
            r = subprocess.run([sys.executable, TOOL, a, b], capture_output=True, text=True, timeout=120)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("different classes", r.stderr)


if __name__ == "__main__":
    unittest.main()
