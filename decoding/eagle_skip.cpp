// EagleStrategy's skipped rounds (vvs, decoding/vvs_schedule.h): a round the schedule skips grows
// and cuts its dynamic tree as any round, reads it back, and commits one path of it without a
// target forward. The old root and the path's drafts but the last get their KV in the next
// forward (as repairs, beside that round's tree: VVS's [chain; tree] pass), and the drafter's next
// catch-up reads the last true features again (reuse_prev), kept in a ring of recent elements.
#include <algorithm>
#include <set>

#include "common/error.h"
#include "decoding/eagle_lane.h"
#include "engine/model/tokenizer.h"
#include "engine/ops/philox.h"

namespace vkspec {

void EagleLane::allocate_skipping(Context& ctx, const ModelSet& models) {
  if (opt_.tree.kind != EagleTreeKind::Dynamic || opt_.sampled)
    throw Error(name() + ": skipped rounds commit a path of EAGLE-2's dynamic tree of top tokens");
  // A skipped round reuses up to depth features back from its first element.
  ring_rows_ = opt_.tree.depth + 1;
  const int64_t D = t_.config().dim;
  feature_ring_ = ctx.tensor(DType::F32, {rows_ * ring_rows_, D}, name() + " recent target features");
  if (opt_.skip->schedule != VvsOptions::Schedule::Dynamic) return;
  if (!models.tokenizer)
    throw Error(name() + ": the dynamic schedule compares draft paths in the tokenizer's codebook (--vq FILE)");
  const Tensor& cb = models.tokenizer->codebook();
  if (cb.shape().rank != 2 || cb.shape()[0] < vocab())
    throw Error(name() + ": the tokenizer's codebook " + cb.shape().str() + " does not cover the vocabulary of " +
                std::to_string(vocab()));
  codebook_dim_ = cb.shape()[1];
  codebook_.resize(static_cast<size_t>(cb.numel()));
  ctx.download(cb, codebook_.data(), codebook_.size() * 4);
}

std::vector<std::vector<int32_t>> EagleLane::leaf_paths(const std::vector<Node>& tree) const {
  std::vector<bool> parent(tree.size(), false);
  for (size_t i = 1; i < tree.size(); ++i) parent[static_cast<size_t>(tree[i].parent)] = true;
  std::vector<std::vector<int32_t>> paths;
  for (size_t i = 1; i < tree.size(); ++i) {
    if (parent[i]) continue;
    std::vector<int32_t> p;
    for (int32_t n = static_cast<int32_t>(i); n > 0; n = tree[static_cast<size_t>(n)].parent) p.push_back(n);
    std::reverse(p.begin(), p.end());
    paths.push_back(std::move(p));
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

bool EagleLane::may_skip(int64_t c) const {
  const VvsOptions& o = *opt_.skip;
  const int64_t round = steps_ - 1;  // the code's idx: 0 is the tree drafted after the first token
  if (o.schedule == VvsOptions::Schedule::Uniform) return vvs_uniform_skips(o, round, c);
  return !last_skipped_ && c >= kVvsFirstSkip;
}

bool EagleLane::skip_grown_tree(int64_t c, StepEvent& e) {
  const VvsOptions& o = *opt_.skip;
  const std::vector<std::vector<int32_t>> paths = leaf_paths(tree_);
  if (paths.empty()) return false;  // nothing drafted: the root alone is verified
  if (o.schedule == VvsOptions::Schedule::Dynamic) {
    std::vector<std::vector<int32_t>> tokens;
    for (const auto& p : paths) {
      tokens.emplace_back();
      for (int32_t n : p) tokens.back().push_back(tree_[static_cast<size_t>(n)].token);
    }
    if (vvs_path_similarity(tokens, codebook_, codebook_dim_, o.decay) < o.threshold) return false;
  }
  const float u =
      philox::uniform(in().seed, 0, philox::purpose_word(philox::Purpose::SkipPath, static_cast<uint32_t>(steps_)), 0);
  const VvsSkip chosen = vvs_choose_skip(paths, u);
  commit_unverified(tree_, paths[chosen.path], chosen.drafts, e);
  record_step_size(c, 0, 0, e);  // nothing was tested: the size carries over to what it committed
  return true;
}

void EagleLane::commit_unverified(const std::vector<Node>& tree, const std::vector<int32_t>& path, int64_t drafts,
                                  StepEvent& e) {
  const int64_t c = committed();
  std::set<std::pair<int64_t, int32_t>> listed;
  for (size_t i = 1; i < tree.size(); ++i)
    if (listed.insert({tree[i].position, tree[i].token}).second) {
      e.proposed.push_back(static_cast<int32_t>(tree[i].position));
      e.proposed_tokens.push_back(tree[i].token);
    }
  // The chain whose KV the next forward writes: the old root, then every committed draft but the
  // new root (the last), which that forward feeds as its tree's root.
  repairs_.push_back(c - 1);
  for (int64_t d = 0; d < drafts; ++d) {
    const Node& n = tree[static_cast<size_t>(path[static_cast<size_t>(d)])];
    grid()[static_cast<size_t>(n.position)] = n.token;
    e.accepted.push_back(static_cast<int32_t>(n.position));
    if (d + 1 < drafts) repairs_.push_back(n.position);
  }
  std::sort(repairs_.begin(), repairs_.end());
  committed() = c + drafts;
  // reuse_prev: element m takes the true feature of element m - drafts (with fewer than `drafts`
  // elements known, the known ones and then the last again).
  feature_rows_.clear();
  for (int64_t m = c; m < committed(); ++m) {
    const int64_t source = drafts <= c ? m - drafts : std::min(m - c, c - 1);
    feature_rows_.push_back(static_cast<int32_t>(source % ring_rows_));
  }
  features_from_ring_ = last_skipped_ = true;
  e.verified = false;
}

void EagleLane::record_ring(const std::vector<int32_t>& path, const std::vector<int32_t>& kept) {
  std::vector<CopyRegion> copies;
  auto keep = [&](int64_t element, int64_t row) {
    if (element < 0 || element >= image_tokens()) return;
    for (int64_t b = 0; b < rows_; ++b)
      copies.push_back({hidden_.view().rows(b * hidden_queries_ + row, 1),
                        feature_ring_.view().rows(b * ring_rows_ + element % ring_rows_, 1)});
  };
  // A repair re-fed at position p computed f(p + 1); the path's node at p too.
  for (size_t r = 0; r < fed_repairs_.size(); ++r) keep(fed_repairs_[r] + 1, forward_nodes_ + static_cast<int64_t>(r));
  for (int32_t i : path) keep(tree_[static_cast<size_t>(i)].position + 1, kept[static_cast<size_t>(i)]);
  if (!copies.empty()) t_.stream().copy(copies);
}

}  // namespace vkspec
