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
// entries onto x, TV(p', r_i) <= delta) and continues with p' without x; lossy. With --lambda
// (LANTERN++) the relaxed test is the same and the residual is the rule's (AcceptRule::record_rejection).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/eagle_tree.h"
#include "decoding/candidate_tree.h"
#include "decoding/speculative_base.h"

namespace vkspec {

struct EagleOptions {
  EagleTreeOptions tree;
  // Candidates: the drafter's most likely tokens tested as point masses (EAGLE-2's), or (ours)
  // independent samples of its distribution q tested with min(1, p/q) against the running
  // residual norm(max(r - q, 0)) (multi-draft speculative sampling; static and chain trees, whose
  // shape does not depend on which tokens were drawn).
  bool sampled = false;
  AcceptChoice rule;  // exact, or a rule that relaxes the target (AcceptRuleDescriptor::relaxes_target)
};

// Options of the tree, shared by `eagle` and `lantern --drafter eagle`.
std::vector<OptionSpec> eagle_tree_option_specs();
EagleTreeOptions parse_eagle_tree_options(const OptionValues& o);
// The same for a method whose tree kind is fixed (lantern++: static), without a --tree option.
EagleTreeOptions parse_eagle_tree_options(const OptionValues& o, EagleTreeKind kind);
// --candidates sampled (checked against the tree kind).
bool parse_eagle_sampled(const OptionValues& o);
// Queries of the largest target forward: the root, the tree, the repairs of the previous step.
int64_t eagle_max_queries(const EagleTreeOptions& o);

class EagleStrategy : public Strategy {
 public:
  EagleStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, const EagleOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Node {
    int32_t parent;    // index in the verified tree; -1 for the root
    int64_t position;  // image position of its token (root: the last committed one, -1 at c = 0)
    int32_t token;
    int64_t slot;      // target KV slot
    bool alternate;    // in a scratch slot; re-fed next step when accepted
    int64_t q_row;     // sampled candidates: the row of q_store_ it was drawn from
    int32_t draft_id;  // sampled candidates: its row of draft_tokens_, where the GPU drew its token
  };
  // Grows the draft tree from committed position c by the drafter's top tokens, a submit per
  // level (the host picks the children); returns the verified tree.
  std::vector<Node> draft_tree(int64_t c);
  // Sampled candidates: records the whole tree, whose shape does not depend on the tokens, with
  // every token drawn on the GPU (draft_tokens_), for the same submit as the target's forward.
  std::vector<Node> record_sampled_tree(int64_t c);
  Node root_node(int64_t c) const;
  // The verified tree from a grown builder: the first node of each depth in its position's slot,
  // the others in scratch slots; drawn: the tokens are the GPU's, by builder id.
  std::vector<Node> verified_tree(const DraftTreeBuilder& b, int64_t c, bool drawn) const;
  // Records the GPU's draws of builder nodes [first, end) from their parents' stored q.
  void record_draws(const DraftTreeBuilder& b, size_t first, int64_t c);
  // Records the drafter's catch-up on elements [drafter_valid_, c) and stores g(c - 1) as the
  // feature of tree node 0; q row 0 gets the root's draft distribution.
  void record_catch_up(int64_t c);
  // Records the drafter on frontier nodes (builder ids) whose features are stored by id, with
  // `batch`; drawn: their tokens are in draft_tokens_ (GPU draws), not in the builder.
  void record_level(const DraftTreeBuilder& b, const std::vector<int32_t>& frontier, int64_t c, GptBatch& batch,
                    bool drawn);
  GptQueries tree_queries(const std::vector<Node>& tree, int64_t c) const;
  void record_tests(const std::vector<Node>& tree, uint32_t round);
  // Walks the tree with the read-back tests, commits, and returns the accepted path (root first).
  std::vector<int32_t> walk_and_commit(const std::vector<Node>& tree, StepEvent& e);

  EagleDrafter& eagle_;
  EagleOptions opt_;
  std::unique_ptr<AcceptRule> rule_;
  int64_t cls_;
  KvCache drafter_cache_;
  int64_t drafter_valid_ = 0;          // drafter elements [0, drafter_valid_) hold true features
  std::vector<int32_t> feature_rows_;  // rows of hidden_ holding f(drafter_valid_), f(drafter_valid_ + 1), ...
  int64_t hidden_queries_ = 0;         // queries of the forward hidden_ was copied from
  std::vector<int64_t> repairs_;       // positions to re-feed in their own slots
  std::vector<int64_t> drafter_slot_;  // per builder node: its drafter scratch slot (-1: none)
  std::vector<int32_t> g_row_;         // per builder node: its row of g_ (-1: not run)
  int64_t next_drafter_slot_ = 0, next_g_row_ = 0;
  int64_t drafter_queries_ = 0;                           // the most queries of a drafter forward
  std::unique_ptr<GptBatch> drafter_batch_;               // the catch-up, and each level of a top-token tree
  std::vector<std::unique_ptr<GptBatch>> level_batches_;  // a sampled tree's levels, one submit
  Tensor hidden_;       // f32 [rows * max_q, dim]: the last target forward's final hidden states
  Tensor features_;     // f32 [rows * max_nodes, dim]: the drafter's input features of a forward
  Tensor g_;            // f32 [rows * max_nodes, dim]: g of each builder node, row b * max_nodes + id
  Tensor last_logits_;  // f32 [rows, V]: the catch-up's last element's logits
  Tensor q_;            // f32 [max_nodes, V]: draft distributions of a level (read back)
  Tensor q_store_;      // f32 [expanded, V]: sampled candidates: each expanded node's q, by g_ row
  Tensor probs_, q_tree_, residuals_, relaxed_, rejected_q_, zeros_, positions_;
  Tensor tokens_, accept_, final_;
  TreeTestRows tree_rows_;  // exact rule: ops::tree_tests' parent and position rows
  Tensor draft_tokens_;     // u32 [1 + nodes]: sampled candidates' tokens by builder id (read back)
  std::vector<uint32_t> drawn_host_;
  std::vector<uint32_t> accept_host_, final_host_;
};

}  // namespace vkspec
