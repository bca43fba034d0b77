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
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "decoding/candidate_tree.h"
#include "decoding/strategy.h"
#include "decoding/window_strategy.h"

namespace vkspec {

enum class SjdPacPath { First, Longest };

struct SjdPacOptions {
  int64_t width = 3;    // K: candidates per tree depth
  int64_t depth = 3;    // D: tree levels with the root (the code's tree_depth): D - 1 candidate depths
  int64_t window = 64;  // L: nodes per forward with the root (the code's max_num_new_tokens)
  SjdPacPath path = SjdPacPath::First;
  // How a position entering the window is first drafted: uniform (the code's, K distinct tokens in
  // the tree), or the token to its left / above it with a point-mass q (one candidate: a point
  // mass has no second token to draw).
  DraftInit init = DraftInit::Random;
};

// (K^D - 1) / (K - 1): the tree's nodes with the root (D for K = 1).
int64_t sjd_pac_tree_nodes(int64_t width, int64_t depth);

// The shape of one step's tree from the number of candidates of each candidate depth (pools[t]
// for depth t + 1, <= K) and the chain after it: nodes in breadth-first order, the main path (the
// branch-0 path, then the chain) canonical. Pure, so tests check shapes without a device.
struct SjdPacNode {
  int32_t parent;   // -1 for the root
  int32_t depth;    // 0 for the root
  int32_t pick;     // the candidate's index at its position (0: the main path's)
  bool canonical;   // on the main path: the position's own KV slot
  bool first_pick;  // the first node holding this (depth, pick): listed once as proposed
};
std::vector<SjdPacNode> sjd_pac_shape(const std::vector<int>& pools, int64_t chain);

class SjdPacStrategy : public Strategy {
 public:
  SjdPacStrategy(const ModelSet& models, const StrategyInputs& in, const SjdPacOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Node {
    int32_t parent;
    int64_t position;  // image position of the node's token (root: the last committed one)
    int32_t token;
    int64_t slot;
    int32_t pick;
    bool canonical, shown;
  };
  struct Readback {
    std::vector<uint32_t> accept, final_token;  // per node
    std::vector<std::vector<uint32_t>> draws;   // [draw][node]: draws for the node's next position
  };
  // The step's tree from committed position c (new positions initialised on the way).
  std::vector<Node> build_tree(int64_t c);
  // Positions [ready_, end) get their first drafts (--init; K distinct uniform ones below tree_end).
  void initialise(int64_t end, int64_t tree_end);
  // Rows of the last forward's probabilities that became stored q' rows (recorded at the start of
  // the next submit, before anything reads them).
  void record_pending_rows();
  // q rows of every node: q' for candidate 0, q' without the earlier candidates for the others.
  void record_candidate_rows(const std::vector<Node>& nodes, int64_t c, int64_t tree_depths);
  // The independent draws each node's row gives for the next step's candidates.
  void record_draws(const std::vector<Node>& nodes, uint32_t round);
  // What the viewer outlines (StepEvent::groups): the positions that hold several candidates (the
  // proactive tree), then the main path's chain.
  static std::vector<std::vector<int32_t>> tree_and_chain(const std::vector<Node>& nodes);
  // The committed path's nodes (root first) under --path.
  AcceptedPath choose_path(const std::vector<Node>& nodes, const std::vector<uint32_t>& accept) const;
  // Commits the path and the token after it; returns that token's position.
  int64_t commit_path(const std::vector<Node>& nodes, const AcceptedPath& a, const Readback& r, StepEvent& e);
  // Adaptive continuation: new drafts (and, for the next tree's positions, candidates) for every
  // position after f that this forward predicted.
  void continue_window(const std::vector<Node>& nodes, const AcceptedPath& a, const Readback& r, int64_t f);
  // Candidates of position j from node P's readback (kids: P's children) under --path; extra ones
  // only for a position of the next step's tree.
  std::vector<uint32_t> next_candidates(const std::vector<Node>& nodes, const std::vector<int32_t>& kids, int32_t P,
                                        const Readback& r, int64_t j, bool tree_position) const;

  SjdPacOptions opt_;
  int64_t cls_, draws_per_node_;
  TreeTestRows tree_rows_;
  std::vector<std::vector<uint32_t>> cand_;           // per position: candidates, the coupled draft first
  int64_t ready_ = 0;                                 // positions below have candidates and a q' row
  std::vector<std::pair<int32_t, int64_t>> pending_;  // (probs row, position): q' rows to store
  std::vector<int64_t> repairs_;                      // positions whose canonical slot to re-feed (accepted alternates)
  Tensor q_base_;                                     // f32 [N, V]: each position's q' (candidate 0's q row)
  Tensor probs_, q_tree_, residuals_, first_child_q_;  // f32 [max_q, V]
  Tensor multihot_, q_extra_;                          // f32 [(K - 1)(D - 1), V]: removed candidates, q^(k) rows
  Tensor tokens_;                                      // u32 [max_q], host-written: each node's candidate
  Tensor draw_pos_;                                    // u32 [max_q], host-written: the position each node predicts
  Tensor accept_, final_, draws_;                      // u32 [max_q], [max_q], [draws, max_q]: read back
};

}  // namespace vkspec
