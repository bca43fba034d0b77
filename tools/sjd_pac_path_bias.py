#!/usr/bin/env python3
"""Exact law of the token SJD-PAC commits at the first tree depth, under the two path rules of
decoding/sjd_pac_strategy.h, on a toy two-position model (no sampling: every candidate draw and
acceptance uniform is integrated out).

The step: depth-1 candidates a0, a1 and depth-2 candidates b0, b1 are distinct uniform draws from
V tokens (the first step's drafts, q^(0) uniform, q^(1) uniform without candidate 0); every test
is ops::tree_tests' (child k against the running residual with its own q row), and one acceptance
uniform per (position, sibling) is shared by all parents of a depth, as in the engine.
  first   (ours, --path first): a0 if it passes, else a1 if it passes, else the residual after both.
  longest (the released code, --path longest): the root-to-leaf path with the most leading passes,
          ties to the lower path index; the correction the residual after both siblings.
The two differ only when a0 and a1 both pass and a1's subtree has a passing child while a0's has
none: the released rule then commits a1, although a1's test presupposed a0's rejection. Prints
both laws next to the target p0 and asserts that `first` is exact.

usage: tools/sjd_pac_path_bias.py
"""
import itertools
import sys

P0 = [0.40, 0.35, 0.25]
# p(. | token at position 0): A's continuation is peaked (uniform candidates often both fail),
# B's is uniform (one of them always passes), C's in between.
P1 = [[0.98, 0.01, 0.01], [1 / 3, 1 / 3, 1 / 3], [0.50, 0.25, 0.25]]


def normalised(w):
    s = sum(w)
    return [x / s for x in w] if s > 0 else None


def sibling_tests(p, c0, c1):
    """Pass probabilities of c0 (q uniform) and c1 (q uniform without c0) against p's residuals,
    and the residual after both."""
    V = len(p)
    q0 = [1 / V] * V
    t0 = min(1.0, p[c0] / q0[c0])
    r1 = normalised([max(a - b, 0.0) for a, b in zip(p, q0)]) or p
    q1 = [0.0 if v == c0 else 1 / (V - 1) for v in range(V)]
    t1 = min(1.0, r1[c1] / q1[c1])
    r2 = normalised([max(a - b, 0.0) for a, b in zip(r1, q1)]) or r1
    return t0, t1, r2


def miss_both(s0, s1):
    """P(u2 >= s0 and u3 >= s1): a subtree whose two children pass below thresholds s0, s1 fails."""
    return (1 - s0) * (1 - s1)


def laws():
    V = len(P0)
    pairs = list(itertools.permutations(range(V), 2))
    first, longest = [0.0] * V, [0.0] * V
    for (a0, a1), (b0, b1) in itertools.product(pairs, pairs):
        w = 1 / len(pairs) ** 2
        t0, t1, r2 = sibling_tests(P0, a0, a1)
        sA0, sA1, _ = sibling_tests(P1[a0], b0, b1)
        sB0, sB1, _ = sibling_tests(P1[a1], b0, b1)
        # a1's subtree passes, a0's fails, with the shared uniforms u2 (b0) and u3 (b1).
        b_ok_a_not = miss_both(sA0, sA1) - miss_both(max(sA0, sB0), max(sA1, sB1))
        for law, swap in ((first, 0.0), (longest, t0 * t1 * b_ok_a_not)):
            law[a0] += w * (t0 - swap)
            law[a1] += w * ((1 - t0) * t1 + swap)
            for v in range(V):
                law[v] += w * (1 - t0) * (1 - t1) * r2[v]
    return first, longest


def main():
    first, longest = laws()
    tv = 0.5 * sum(abs(a - b) for a, b in zip(longest, P0))
    fmt = lambda law: "[" + ", ".join(f"{x:.4f}" for x in law) + "]"
    print(f"target p0       {fmt(P0)}")
    print(f"--path first    {fmt(first)}")
    print(f"--path longest  {fmt(longest)}  total variation from p0: {tv:.4f}")
    if max(abs(a - b) for a, b in zip(first, P0)) > 1e-12:
        print("the first-accepted rule is not exact here: a bug in this script or the rule", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
