// EagleLane's step, phase by phase (decoding/eagle_lane.h), and its verification: the tests of
// the tree on the target's probabilities, the walk and the commit.
#include <algorithm>
#include <set>

#include "common/error.h"
#include "decoding/eagle_lane.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/speculative.h"

namespace vkspec {

bool EagleLane::begin(StepEvent&) {
  const int64_t c = c_ = committed();
  tree_ = {root_node(c)};
  levels_ = 0;
  choose_step_tree(c);
  if (c == 0) {
    plan_ = Plan::Root;  // the first token is the target's own sample
  } else if (opt_.skip && may_skip(c)) {
    plan_ = Plan::MaySkip;
  } else if (!shaped_on_device() && cut_on_host()) {
    plan_ = Plan::HostCut;
  } else {
    plan_ = Plan::Device;
    return false;
  }
  if (plan_ == Plan::Root) return false;
  record_host_cut(c, grow_dynamic_tree(c));
  return true;
}

bool EagleLane::prepare(StepEvent& e) {
  const int64_t c = c_;
  if (plan_ == Plan::HostCut || plan_ == Plan::MaySkip) {
    tree_ = read_cut_tree(c, cut_rows(step_levels_));
    if (plan_ == Plan::MaySkip && skip_grown_tree(c, e)) {
      ++steps_;
      return false;
    }
  } else if (plan_ == Plan::Device && shaped_on_device()) {
    tree_ = record_static_tree(c);
  } else if (plan_ == Plan::Device) {
    levels_ = grow_dynamic_tree(c);
    tree_ = placeholder_tree(c, levels_);
  }
  fed_repairs_ = repairs_;
  forward_nodes_ = static_cast<int64_t>(tree_.size());
  return true;
}

int64_t EagleLane::add_queries(GptQueries& q, ops::AttentionMaskBuilder& mb) const {
  add_candidate_tree_queries(t_, tree_, c_, repairs_, grid(), q, mb);
  return std::count_if(tree_.begin(), tree_.end(), [](const Node& n) { return n.alternate; });
}

GptQueries EagleLane::step_queries(const std::vector<const Condition*>& conditions) const {
  GptQueries q;
  ops::AttentionMaskBuilder mb(queries(), t_.cache().slots());
  add_queries(q, mb);
  q.mask = mb.pack();
  q.conditions = conditions;
  return q;
}

void EagleLane::record_into(const GptBatch& batch, int64_t lane, int64_t images, int64_t T) {
  const int64_t first_id = batch.token_offset(lane);
  if (levels_ > 0) {
    // The lane's blocks of meta rows: its own, or one per batch row (r * images + lane) where the
    // batch's rows each have theirs (a ragged batch; captions whose padding differs by row).
    std::vector<int64_t> blocks;
    const int64_t meta_blocks = batch.slots().shape[0] / T;
    for (int64_t b = 0; b < meta_blocks; ++b)
      if (meta_blocks == 1 || b % images == lane) blocks.push_back(b * T);
    record_cut_into(batch, c_, levels_, forward_nodes_, first_id, blocks);
  }
  record_candidate_rows(batch, first_id);
}

void EagleLane::record_after(const TensorView& probs, const TensorView& hidden, int64_t lane, int64_t images,
                             int64_t T) {
  record_tests(probs, static_cast<uint32_t>(steps_));
  // The next step's drafter catch-up reads the features of the root and the accepted path.
  std::vector<CopyRegion> rows;
  for (int64_t r = 0; r < rows_; ++r)
    rows.push_back({hidden.rows((r * images + lane) * T, T), hidden_.view().rows(r * T, T)});
  t_.stream().copy(rows);
  hidden_queries_ = T;
}

void EagleLane::finish(StepEvent& e) {
  const int64_t c = c_, M = forward_nodes_;
  if (levels_ > 0) tree_ = read_cut_tree(c, M);  // its rows are the forward's first queries
  accept_host_.assign(static_cast<size_t>(M), 0);
  final_host_.assign(static_cast<size_t>(M), 0);
  t_.ctx().download(accept_, 0, accept_host_.data(), accept_host_.size() * 4);
  t_.ctx().download(final_, 0, final_host_.data(), final_host_.size() * 4);
  resolve_device_tokens();
  const std::vector<int32_t> kept = drop_missing_candidates();
  const std::vector<int32_t> path = walk_and_commit(e);
  record_step_size(c, c > 0 ? step_levels_ : 0, static_cast<int64_t>(path.size()) - 1, e);

  feature_rows_.clear();  // the path's rows of the forward (its queries, before any drop)
  for (int32_t i : path) feature_rows_.push_back(kept[static_cast<size_t>(i)]);
  features_from_ring_ = last_skipped_ = false;
  if (opt_.skip) record_ring(path, kept);
  // Elements [drafter_valid_, committed) are caught up next step: one feature per element.
  feature_rows_.resize(static_cast<size_t>(std::max<int64_t>(0, committed() - drafter_valid_)));
  ++steps_;
}

void EagleLane::record_tests(const TensorView& probs, uint32_t round) {
  CommandStream& s = t_.stream();
  const std::vector<Node>& tree = tree_;
  const int64_t M = static_cast<int64_t>(tree.size()), N = image_tokens();
  if (rule_->exact()) {  // the loop below in one dispatch, the same numbers
    ops::TreeTests t;
    t.probs = probs;
    t.q = q_tree_.view();
    t.draft = tokens_.view();
    t.scratch = residuals_.view();
    t.seed = in().seed;
    t.accept_purpose = philox::purpose_word(philox::Purpose::Accept, round * kEagleSiblings);
    t.residual_purpose = philox::purpose_word(philox::Purpose::Residual, round);
    t.accept = accept_.view();
    t.final_token = final_.view();
    record_tree_tests(s, t_.ctx(), tree, N, tree_rows_, t);
    return;
  }
  auto pos_view = [&](int64_t n) { return positions_.view().rows(std::min(n, N), 1); };
  int64_t next_residual = 0, next_relaxed = 0;
  for (int64_t p = 0; p < M; ++p) {
    TensorView r = probs.rows(p, 1);
    uint32_t sibling = 0;
    for (int64_t c = p + 1; c < M; ++c) {
      if (tree[static_cast<size_t>(c)].parent != p) continue;
      const TensorView qc = q_tree_.view().rows(c, 1), token = tokens_.view().rows(c, 1);
      const int64_t scratch_row = next_relaxed++;  // the rule's rows for this node (the rule is not exact)
      const TensorView target_row = rule_->record_target(s, r, token, relaxed_.view().rows(scratch_row, 1));
      ops::spec_accept(s, target_row, qc, token, pos_view(tree[static_cast<size_t>(c)].position),
                       {in().seed, philox::purpose_word(philox::Purpose::Accept, round * kEagleSiblings + sibling)},
                       accept_.view().rows(c, 1));
      const AcceptRule::Rejection left =
          rule_->record_rejection(s, r, target_row, qc, token, rejected_q_.view().rows(scratch_row, 1));
      const TensorView next = residuals_.view().rows(next_residual++, 1);
      ops::residual_distribution(s, left.from, left.minus, next);
      r = next;
      ++sibling;
    }
    ops::spec_residual_sample(s, r, zeros_.view(), pos_view(tree[static_cast<size_t>(p)].position + 1),
                              {in().seed, philox::purpose_word(philox::Purpose::Residual, round)},
                              final_.view().rows(p, 1));
  }
}

std::vector<int32_t> EagleLane::walk_and_commit(StepEvent& e) {
  const std::vector<Node>& tree = tree_;
  const int64_t M = static_cast<int64_t>(tree.size());
  AcceptedPath walk = accepted_path(tree, accept_host_);
  std::set<std::pair<int64_t, int32_t>> listed;  // a candidate repeated under another parent once
  for (int64_t i = 1; i < M; ++i) {
    const Node& n = tree[static_cast<size_t>(i)];
    if (!listed.insert({n.position, n.token}).second) continue;
    e.proposed.push_back(static_cast<int32_t>(n.position));
    e.proposed_tokens.push_back(n.token);
  }
  const PathCommit done = commit_accepted_path(
      tree, walk, final_host_, [this](uint32_t t, int64_t p) { return checked_token(t, p); }, grid(), e, repairs_);
  if (done.bonus_position >= 0 && !listed.count({done.bonus_position, done.bonus_token})) {
    e.proposed.push_back(static_cast<int32_t>(done.bonus_position));
    e.proposed_tokens.push_back(done.bonus_token);
  }
  committed() = done.end;
  ++*image_.nfe;
  return std::move(walk.path);
}

void EagleLane::record_candidate_rows(const GptBatch& batch, int64_t first_id) {
  CommandStream& s = t_.stream();
  const std::vector<Node>& tree = tree_;
  const int64_t M = static_cast<int64_t>(tree.size());
  std::vector<uint32_t> toks(static_cast<size_t>(M), ops::kNoToken);
  for (int64_t i = 1; i < M; ++i)
    toks[static_cast<size_t>(i)] = static_cast<uint32_t>(tree[static_cast<size_t>(i)].token);
  t_.ctx().upload(tokens_, 0, toks.data(), toks.size() * 4);
  // Tokens chosen on the GPU reach the target's batch and the tests in the stream (node i is query
  // i: the root is fed the last committed token).
  std::vector<CopyRegion> drawn;
  for (int64_t i = 1; i < M; ++i) {
    const int32_t id = tree[static_cast<size_t>(i)].draft_id;
    if (id < 0) continue;
    drawn.push_back({draft_tokens_.view().rows(id, 1), batch.token_ids().rows(first_id + i, 1)});
    drawn.push_back({draft_tokens_.view().rows(id, 1), tokens_.view().rows(i, 1)});
  }
  if (!drawn.empty()) s.copy(drawn);
  if (M < 2) return;
  if (opt_.sampled) {
    std::vector<CopyRegion> q_rows;
    for (int64_t i = 1; i < M; ++i)
      q_rows.push_back({q_store_.view().rows(tree[static_cast<size_t>(i)].q_row, 1), q_tree_.view().rows(i, 1)});
    s.copy(q_rows);
  } else {  // one dispatch, where fills from the host's tokens would be two transfers per node
    ops::point_masses(s, tokens_.view().rows(1, M - 1), q_tree_.view().rows(1, M - 1));
  }
}

void EagleLane::resolve_device_tokens() {
  if (!shaped_on_device()) return;
  drawn_host_.resize(static_cast<size_t>(draft_tokens_.shape()[0]));
  t_.ctx().download(draft_tokens_, 0, drawn_host_.data(), drawn_host_.size() * 4);
  for (size_t i = 1; i < tree_.size(); ++i) {
    Node& n = tree_[i];
    if (n.draft_id < 0) continue;
    const uint32_t x = drawn_host_[static_cast<size_t>(n.draft_id)];
    n.token = x == ops::kNoToken ? -1 : checked_token(x, n.position);
  }
}

std::vector<int32_t> EagleLane::drop_missing_candidates() {
  std::vector<Node>& tree = tree_;
  std::vector<int32_t> kept, index(tree.size(), -1);
  std::vector<Node> out;
  for (size_t i = 0; i < tree.size(); ++i) {
    Node n = tree[i];
    if (i > 0 && (n.token < 0 || index[static_cast<size_t>(n.parent)] < 0)) continue;
    if (i > 0) n.parent = index[static_cast<size_t>(n.parent)];
    index[i] = static_cast<int32_t>(out.size());
    kept.push_back(static_cast<int32_t>(i));
    out.push_back(n);
  }
  if (out.size() == tree.size()) return kept;
  for (size_t j = 0; j < kept.size(); ++j) {
    accept_host_[j] = accept_host_[static_cast<size_t>(kept[j])];
    final_host_[j] = final_host_[static_cast<size_t>(kept[j])];
  }
  accept_host_.resize(out.size());
  final_host_.resize(out.size());
  tree = std::move(out);
  return kept;
}

}  // namespace vkspec
