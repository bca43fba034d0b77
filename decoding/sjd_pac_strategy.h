#pragma once
// SJD-PAC (Kang et al., CVPR 2026, "Accelerating Speculative Jacobi Decoding via Proactive Drafting
// and Adaptive Continuation"; released sampler github.com/KangJialiang/SJD-PAC,
// scheduler/sjd_pac_iteration_lumina_mgpt.py). Training-free Jacobi decoding with two additions:
//  - Proactive Drafting: each step verifies, in one target forward with tree attention, a small
//    Cartesian tree after the last committed token (the root): depths 1 .. D - 1 hold K candidates
//    each for their position, shared by every parent of the depth above, so the tree has
//    (K^D - 1) / (K - 1) nodes with the root; the branch-0 path then continues as a chain until the
//    node budget L (with the root) is spent: K 3, D 3, L 64 give 13 tree nodes and a main path of
//    54. Non-canonical nodes sit in scratch KV slots and an accepted one's canonical slot is re-fed
//    by the next forward (candidate_tree.h, as hawk does).
//  - Adaptive Continuation: every position after the committed ones keeps a draft for the next
//    step that is coupled to the old one: the resolution of the old candidates against this step's
//    stale p (kept when accepted, else the residual sample), an exact sample of p, whose q becomes
//    p (scd-mc's maximal coupling). New positions get uniform random tokens with q uniform (or,
//    --init left|above, a copied token with a point-mass q).
//
// Verification is multi-draft speculative sampling over the whole tree in one dispatch
// (ops::tree_tests): a node's children k = 0, 1, ... are tried in order, child k against the running
// residual r_k (r_0 = the node's p, r_{k+1} = norm(max(r_k - q^(k), 0))) with its own q row q^(k).
//
// --path first (default, exact). The extra candidates of a position are drawn WITHOUT replacement
// from the position's stored q' (the p it was coupled to): x_0 is the coupled draft, x_k (k >= 1)
// the first of a fixed number of independent draws of q' not among x_0 .. x_{k-1}, and x_k is
// tested with q^(k) = q' with x_0 .. x_{k-1} zeroed and renormalised. The first draw outside a set
// A is distributed as q' restricted to the complement of A (whatever number of draws it took), so
// given x_0 .. x_{k-1} each candidate is an exact sample of the row it is tested with, and
// recursive rejection sampling then yields exactly the parent's p (Jeon et al. 2024's
// without-replacement form). When the draws find no new token (q' is peaked, or its support is
// used up) the position simply has fewer candidates: that depends only on q' and on draws
// independent of the tests. The walk descends into the FIRST accepted child; when none is, the next
// token is drawn from the residual after all of them (or from p at a node without children: the
// bonus token of a fully accepted main path is a sample of the last node's p, not a pad row).
//
// --path longest (the released code's rule, lossy: tests/test_decoding_sjd_pac.cpp). The same
// tests, but the committed path is the root-to-leaf path with the longest accepted prefix (ties:
// the lowest path index), the correction the residual after all siblings at its first failure,
// and the extra candidates are distinct draws from the residual norm(max(p - q, 0)) of the old
// candidate 0 (behind the kept token when it passed), while the next step tests them as draws of
// q' with the earlier candidates removed.
//
// Everything for the step (the candidates' q rows, forward, sampler, tests, the draws for the next
// candidates) is recorded into one submit; the host reads back three small integer rows per node.
// The image's state and the step's device rows are SjdPacImage and SjdPacStep (sjd_pac_image.h),
// which SjdPacBatchStrategy shares (several images per forward); the tree's shape is
// sjd_pac_shape.h, and sjd_pac_registry.cpp registers the method with both strategies.
#include <cstdint>
#include <vector>

#include "decoding/sjd_pac_image.h"
#include "decoding/sjd_pac_shape.h"
#include "decoding/strategy.h"

namespace vkspec {

class SjdPacStrategy : public Strategy {
 public:
  SjdPacStrategy(const ModelSet& models, const StrategyInputs& in, const SjdPacOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  SjdPacOptions opt_;
  SjdPacTensors rows_;
  SjdPacImage image_;
  SjdPacStep step_rows_;
};

}  // namespace vkspec
