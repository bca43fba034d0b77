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
// node's ancestors and itself, in scratch slots). The levels are chosen on the device (ops in
// engine/ops/draft_tokens.h), and a dynamic tree is cut there too (ops::draft_tree_cut, which is
// DraftTreeBuilder::select's cut), so one submit grows and verifies the tree; only the relaxed
// rules, whose tests are recorded node by node, read the cut back first. One target forward then
// verifies the tree (tree attention; the first node of each depth in its position's slot, the
// others in scratch slots, repaired the next step when accepted, as in Hawk).
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
#include <memory>
#include <string>
#include <vector>

#include "decoding/eagle_lane.h"
#include "decoding/strategy.h"

namespace vkspec {

// Options of the tree, shared by `eagle` and `lantern --drafter eagle`.
std::vector<OptionSpec> eagle_tree_option_specs();
EagleTreeOptions parse_eagle_tree_options(const OptionValues& o);
// The same for a method whose tree kind is fixed (lantern++: static), without a --tree option.
EagleTreeOptions parse_eagle_tree_options(const OptionValues& o, EagleTreeKind kind);
// --candidates sampled (checked against the tree kind).
bool parse_eagle_sampled(const OptionValues& o);

// One image (EagleLane's step on the session's forward).
class EagleStrategy : public Strategy {
 public:
  EagleStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, const EagleOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  EagleLane lane_;
  Tensor probs_;  // f32 [max queries, V]: the target's probabilities of the tree's rows
};

}  // namespace vkspec
