#pragma once
// Speculative decoding with an EAGLE-style feature drafter (ModelSet::eagle, EagleDrafter) and a
// draft tree: EAGLE-2 (Li et al., EMNLP 2024), and LANTERN (Jang et al., ICLR 2025), which drafts
// exactly this way and relaxes the test (`lantern --drafter eagle`).
//
// A step from committed position c: the drafter first catches up on the tokens committed since
// its last step, reading the target's true features of those positions (the previous forward's
// hidden states of the root and the accepted path), which yields its draft distribution for
// position c. The tree then grows level by level (decoding/eagle_tree.h): the drafter runs on
// the level's chosen nodes at once (tree attention over its own cache: committed elements, the
// node's ancestors and itself, in scratch slots), each submit reading back the nodes'
// distributions so the host can pick the next level. One target forward then verifies the tree
// (tree attention; the first node of each depth in its position's slot, the others in scratch
// slots, repaired the next step when accepted, as in Hawk).
//
// Candidates are the drafter's most likely tokens, not samples, so each is tested as EAGLE's
// sampling mode does: as a point mass (q = 1 at the token). A node's children are tried in rank
// order, child i against the residual r_i (r_0 = p, r_{i+1} = r_i without child i's token,
// renormalised): accepted with probability r_i(x); when all are rejected the next token is drawn
// from the last residual. This is sampling from p by elimination, so the exact rule is lossless
// whatever the tree (it depends on the drafter and the committed tokens only). LANTERN's rule
// tests child i against r_i relaxed around its token (p' moves the mass of x's nearest codebook
// entries onto x, TV(p', r_i) <= delta) and continues with p' without x; lossy.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/eagle_tree.h"
#include "decoding/speculative_base.h"

namespace vkspec {

struct EagleOptions {
  EagleTreeOptions tree;
  AcceptRule rule;
};

// Options of the tree, shared by `eagle` and `lantern --drafter eagle`.
std::vector<OptionSpec> eagle_tree_option_specs();
EagleTreeOptions parse_eagle_tree_options(const OptionValues& o);
// Queries of the largest target forward: the root, the tree, the repairs of the previous step.
int64_t eagle_max_queries(const EagleTreeOptions& o);

class EagleStrategy : public Strategy {
 public:
  EagleStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, const EagleOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Node {
    int32_t parent;      // index in the verified tree; -1 for the root
    int64_t position;    // image position of its token (root: the last committed one, -1 at c = 0)
    int32_t token;
    int64_t slot;        // target KV slot
    bool alternate;      // in a scratch slot; re-fed next step when accepted
  };
  // Grows the draft tree from committed position c (several submits); returns the verified tree.
  std::vector<Node> draft_tree(int64_t c);
  // Records the drafter's catch-up on elements [drafter_valid_, c) and stores g(c - 1) as the
  // feature of tree node 0; q row 0 gets the root's draft distribution.
  void record_catch_up(int64_t c);
  // Records the drafter on frontier nodes (builder ids) whose features are stored by id.
  void record_level(const DraftTreeBuilder& b, const std::vector<int32_t>& frontier, int64_t c);
  GptQueries tree_queries(const std::vector<Node>& tree, int64_t c) const;
  void record_tests(const std::vector<Node>& tree, uint32_t round);
  // Walks the tree with the read-back tests, commits, and returns the accepted path (root first).
  std::vector<int32_t> walk_and_commit(const std::vector<Node>& tree, StepEvent& e);

  EagleDrafter& eagle_;
  EagleOptions opt_;
  AcceptRule rule_;
  int64_t cls_;
  KvCache drafter_cache_;
  int64_t drafter_valid_ = 0;       // drafter elements [0, drafter_valid_) hold true features
  std::vector<int32_t> feature_rows_;  // rows of hidden_ holding f(drafter_valid_), f(drafter_valid_ + 1), ...
  int64_t hidden_queries_ = 0;      // queries of the forward hidden_ was copied from
  std::vector<int64_t> repairs_;    // positions to re-feed in their own slots
  std::vector<int64_t> drafter_slot_;  // per builder node: its drafter scratch slot (-1: none)
  std::vector<int32_t> g_row_;         // per builder node: its row of g_ (-1: not run)
  int64_t next_drafter_slot_ = 0, next_g_row_ = 0;
  std::unique_ptr<GptBatch> drafter_batch_;  // one drafter forward per submit
  Tensor hidden_;      // f32 [rows * max_q, dim]: the last target forward's final hidden states
  Tensor features_;    // f32 [rows * max_nodes, dim]: the drafter's input features of a forward
  Tensor g_;           // f32 [rows * max_nodes, dim]: g of each builder node, row b * max_nodes + id
  Tensor last_logits_; // f32 [rows, V]: the catch-up's last element's logits
  Tensor q_;           // f32 [max_nodes, V]: draft distributions of a level (read back)
  Tensor probs_, q_tree_, residuals_, relaxed_, zeros_, positions_;
  Tensor tokens_, accept_, final_;
  std::vector<uint32_t> accept_host_, final_host_;
};

}  // namespace vkspec
