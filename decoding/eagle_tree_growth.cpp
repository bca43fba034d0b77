// EagleStrategy's drafter side: the tree grown from committed position c, on the device. A dynamic
// tree (EAGLE-2's) is grown level by level and cut by ops::draft_tree_cut, which writes the
// target's queries of it; a static or chain tree, whose shape does not depend on the tokens, is
// recorded whole; either goes into the target's submit (decoding/eagle_strategy.h has the method;
// engine/ops/draft_tokens.h the device ops).
#include <algorithm>

#include "common/error.h"
#include "decoding/eagle_lane.h"
#include "engine/model/eagle_drafter.h"
#include "engine/ops/det_math.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/embedding.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {

void EagleLane::allocate_dynamic_tree(Context& ctx) {
  const int64_t k = opt_.tree.topk, d = opt_.tree.depth, width = 2 + d;
  tree_state_ = ctx.tensor(DType::U32, {d + 1, k, width}, name() + " draft tree frontiers");
  choices_ = ctx.tensor(DType::U32, {std::max<int64_t>(d - 1, 1), k}, name() + " frontier picks");
  const int64_t nodes = opt_.tree.nodes;
  cut_tree_ = ctx.tensor(DType::U32, {1 + nodes, 4}, name() + " cut tree", MemoryUsage::Readback);
  if (cut_on_host() || opt_.skip) {
    const int64_t words = (t_.config().seq_len() + nodes + 31) / 32;  // draft_tree_cut's scratch slots
    cut_sink_.tokens = ctx.tensor(DType::U32, {nodes}, name() + " cut queries' tokens (unread)");
    cut_sink_.rope = ctx.tensor(DType::I32, {nodes, 3}, name() + " cut queries' rope positions (unread)");
    cut_sink_.slots = ctx.tensor(DType::U32, {nodes}, name() + " cut queries' slots (unread)");
    cut_sink_.ranges = ctx.tensor(DType::U32, {nodes, 2}, name() + " cut queries' mask ranges (unread)");
    cut_sink_.bits = ctx.tensor(DType::U32, {nodes, words}, name() + " cut queries' mask bits (unread)");
  }
  gather_ids_ = ctx.tensor(DType::U32, {rows_ * k}, name() + " frontier feature rows");
  std::vector<uint32_t> root(static_cast<size_t>(width), 0);
  root[0] = det::float_bits(1.0f);  // value 1, valid
  root[1] = 1;
  ctx.upload(tree_state_, 0, root.data(), root.size() * 4);
}

void EagleLane::record_catch_up(int64_t c) {
  TargetSession& t = t_;
  CommandStream& s = t.stream();
  const int64_t v = drafter_valid_, n = c - v, rows = rows_, E = eagle_max_expanded(opt_.tree);
  if (n < 1 || static_cast<int64_t>(feature_rows_.size()) != n)
    throw Error(name() + ": drafter catch-up of " + std::to_string(n) + " elements with " +
                std::to_string(feature_rows_.size()) + " features");
  std::vector<int64_t> positions;
  std::vector<uint32_t> tokens;
  for (int64_t m = v; m < c; ++m) {
    positions.push_back(eagle_.element_position(m));
    tokens.push_back(static_cast<uint32_t>(grid()[static_cast<size_t>(m)]));
  }
  // Elements see the drafter's own earlier elements, never the condition slots it does not write.
  drafter_batch_->assign(GptQueries::at_positions(eagle_.config(), positions, tokens, conditions_,
                                                  drafter_cache_.slots(),
                                                  [&](int64_t, int64_t slot) { return slot >= cls_; }));
  std::vector<CopyRegion> inputs;
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 0; i < n; ++i)
      inputs.push_back({features_from_ring_
                            ? feature_ring_.view().rows(b * ring_rows_ + feature_rows_[static_cast<size_t>(i)], 1)
                            : hidden_.view().rows(b * hidden_queries_ + feature_rows_[static_cast<size_t>(i)], 1),
                        features_.view().rows(b * n + i, 1)});
  s.copy(inputs);
  t.set_stage(stage::kDrafter);
  const GptOutputs out = eagle_.forward(s, *drafter_batch_, features_.view().rows(0, rows * n), drafter_cache_);
  t.set_stage(stage::kSampling);
  std::vector<CopyRegion> g, logits;
  for (int64_t b = 0; b < rows; ++b) {
    g.push_back({out.hidden.rows(b * n + n - 1, 1), g_.view().rows(b * E, 1)});
    logits.push_back({out.logits.rows(b * n + n - 1, 1), last_logits_.view().rows(b, 1)});
  }
  s.copy(g);
  s.copy(logits);
  const ops::SamplerParams none = in().sampler.op_params(vocab(), in().seed, ops::SampleMode::None, 0);
  ops::sampler(s, last_logits_.view(), {}, none, q_.view().rows(0, 1), {});
  record_candidate_sources(1, 0);
  drafter_valid_ = c;
  ++*image_.draft_forwards;
}

void EagleLane::record_level(const DraftTreeBuilder& b, const std::vector<int32_t>& frontier, int64_t c,
                             GptBatch& batch) {
  TargetSession& t = t_;
  CommandStream& s = t.stream();
  const std::vector<DraftTreeNode>& nodes = b.nodes();
  const int64_t m = static_cast<int64_t>(frontier.size()), rows = rows_, E = eagle_max_expanded(opt_.tree);
  const int64_t scratch0 = eagle_.config().seq_len();
  if (drafter_slot_.size() < nodes.size()) drafter_slot_.resize(nodes.size(), -1);
  if (g_row_.size() < nodes.size()) g_row_.resize(nodes.size(), -1);
  GptQueries q;
  ops::AttentionMaskBuilder mb(m, drafter_cache_.slots());
  std::vector<CopyRegion> inputs;
  for (int64_t i = 0; i < m; ++i) {
    const int32_t id = frontier[static_cast<size_t>(i)];
    const DraftTreeNode& nd = nodes[static_cast<size_t>(id)];
    const int64_t slot = scratch0 + next_drafter_slot_++;
    drafter_slot_[static_cast<size_t>(id)] = slot;
    q.positions.push_back(eagle_.element_position(c + nd.depth - 1));
    q.slots.push_back(static_cast<uint32_t>(slot));
    q.tokens.push_back(nd.token);
    for (int64_t s2 = cls_; s2 < cls_ + c; ++s2) mb.see(i, s2);
    for (int32_t a = nd.parent; a > 0; a = nodes[static_cast<size_t>(a)].parent)
      mb.see(i, drafter_slot_[static_cast<size_t>(a)]);
    mb.see(i, slot);
    const int32_t parent_row = g_row_[static_cast<size_t>(nd.parent)];
    for (int64_t bb = 0; bb < rows; ++bb)
      inputs.push_back({g_.view().rows(bb * E + parent_row, 1), features_.view().rows(bb * m + i, 1)});
  }
  q.mask = mb.pack();
  q.conditions = conditions_;
  batch.assign(q);
  {
    std::vector<CopyRegion> toks;
    for (int64_t i = 0; i < m; ++i)
      toks.push_back({draft_tokens_.view().rows(frontier[static_cast<size_t>(i)], 1), batch.token_ids().rows(i, 1)});
    s.copy(toks);
  }
  s.copy(inputs);
  t.set_stage(stage::kDrafter);
  const GptOutputs out = eagle_.forward(s, batch, features_.view().rows(0, rows * m), drafter_cache_);
  t.set_stage(stage::kSampling);
  std::vector<CopyRegion> g;
  for (int64_t i = 0; i < m; ++i) {
    const int32_t id = frontier[static_cast<size_t>(i)];
    g_row_[static_cast<size_t>(id)] = static_cast<int32_t>(next_g_row_++);
    for (int64_t bb = 0; bb < rows; ++bb)
      g.push_back({out.hidden.rows(bb * m + i, 1), g_.view().rows(bb * E + g_row_[static_cast<size_t>(id)], 1)});
  }
  s.copy(g);
  const ops::SamplerParams none = in().sampler.op_params(vocab(), in().seed, ops::SampleMode::None, 0);
  ops::sampler(s, out.logits, {}, none, q_.view().rows(0, m), {});
  record_candidate_sources(m, g_row_[static_cast<size_t>(frontier[0])]);
  ++*image_.draft_forwards;
}

void EagleLane::record_candidate_sources(int64_t m, int64_t g0) {
  CommandStream& s = t_.stream();
  if (opt_.sampled) {
    s.copy(q_.view().rows(0, m), q_store_.view().rows(g0, m));
    return;
  }
  ops::top_tokens(s, q_.view().rows(0, m), static_cast<uint32_t>(top_width()), top_rows(top_tokens_, g0, m),
                  top_rows(top_values_, g0, m));
}

void EagleLane::record_candidates(const DraftTreeBuilder& b, size_t first, int64_t c) {
  CommandStream& s = t_.stream();
  const std::vector<DraftTreeNode>& nodes = b.nodes();
  if (!opt_.sampled) {  // each node's token: its rank's entry in its parent's top tokens
    const int64_t k = top_width();
    const TensorView table = top_tokens_.view().reshape({top_tokens_.numel()});
    std::vector<CopyRegion> picks;
    for (size_t id = first; id < nodes.size(); ++id)
      picks.push_back({table.rows(g_row_[static_cast<size_t>(nodes[id].parent)] * k + nodes[id].rank, 1),
                       draft_tokens_.view().rows(static_cast<int64_t>(id), 1)});
    if (!picks.empty()) s.copy(picks);
    return;
  }
  // Independent draws from the parent's q by inverse CDF, keyed by the child's position, the step
  // and the child's rank: the q rows the target's tests then use (q_store_, by the parent's g row).
  for (size_t id = first; id < nodes.size(); ++id) {
    const DraftTreeNode& n = nodes[id];
    const int64_t position = c + n.depth - 1;
    ops::spec_residual_sample(s, q_store_.view().rows(g_row_[static_cast<size_t>(n.parent)], 1), zeros_.view(),
                              positions_.view().rows(position, 1),
                              {in().seed, philox::purpose_word(philox::Purpose::Draft,
                                                               static_cast<uint32_t>(steps_) * kEagleSiblings +
                                                                   static_cast<uint32_t>(n.rank))},
                              draft_tokens_.view().rows(static_cast<int64_t>(id), 1));
  }
}

GptBatch* EagleLane::level_batch(size_t level) {
  while (level_batches_.size() <= level)
    level_batches_.push_back(std::make_unique<GptBatch>(t_.ctx(), eagle_.config(), rows_, drafter_queries_,
                                                        drafter_cache_.slots()));
  return level_batches_[level].get();
}

void EagleLane::record_device_level(int64_t level, int64_t c) {
  TargetSession& t = t_;
  CommandStream& s = t.stream();
  const int64_t k = step_tree_.topk, rows = rows_, E = eagle_max_expanded(opt_.tree);
  const int64_t scratch0 = eagle_.config().seq_len(), g_parents = level == 1 ? 0 : 1 + (level - 2) * k;
  const int64_t g_rows = 1 + (level - 1) * k;  // this level's rows of g_ (and of the top tokens)
  // The level's queries with every node's ancestors at row 0 of their depths: the shape of the
  // rows (positions, slots, ranges' ends) is the host's; ops::draft_tree_level writes the tokens
  // and the mask rows of the frontier it picks.
  GptQueries q;
  ops::AttentionMaskBuilder mb(k, drafter_cache_.slots());
  for (int64_t j = 0; j < k; ++j) {
    q.positions.push_back(eagle_.element_position(c + level - 1));
    q.slots.push_back(static_cast<uint32_t>(scratch0 + (level - 1) * k + j));
    q.tokens.push_back(0);
    for (int64_t s2 = cls_; s2 < cls_ + c; ++s2) mb.see(j, s2);
    for (int64_t d = 1; d < level; ++d) mb.see(j, scratch0 + (d - 1) * k);
    mb.see(j, scratch0 + (level - 1) * k + j);
  }
  q.mask = mb.pack();
  q.conditions = conditions_;
  GptBatch& batch = *level_batch(static_cast<size_t>(level - 1));
  batch.assign(q);
  ops::DraftTreeLevel a;
  a.cand_tokens = top_rows(top_tokens_, g_parents, level == 1 ? 1 : k);
  a.cand_values = top_rows(top_values_, g_parents, level == 1 ? 1 : k);
  a.state = tree_state_.view();
  a.level = static_cast<uint32_t>(level - 1);
  a.state_width = static_cast<uint32_t>(tree_state_.shape()[2]);
  a.choice = choices_.view().reshape({choices_.numel()}).rows((level - 1) * k, k);
  a.tokens = batch.token_ids().rows(0, k);
  a.gather_ids = gather_ids_.view().rows(0, rows * k);
  a.mask = batch.mask();
  a.lo = static_cast<uint32_t>(cls_);
  a.hi = static_cast<uint32_t>(cls_ + c);
  a.scratch0 = static_cast<uint32_t>(scratch0);
  a.rows = static_cast<uint32_t>(rows);
  a.row_stride = static_cast<uint32_t>(E);
  a.g_base = static_cast<uint32_t>(g_parents);
  ops::draft_tree_level(s, a);
  ops::embedding(s, g_.view(), a.gather_ids, features_.view().rows(0, rows * k));
  t.set_stage(stage::kDrafter);
  const GptOutputs out = eagle_.forward(s, batch, features_.view().rows(0, rows * k), drafter_cache_);
  t.set_stage(stage::kSampling);
  std::vector<CopyRegion> g;
  for (int64_t bb = 0; bb < rows; ++bb) g.push_back({out.hidden.rows(bb * k, k), g_.view().rows(bb * E + g_rows, k)});
  s.copy(g);
  const ops::SamplerParams none = in().sampler.op_params(vocab(), in().seed, ops::SampleMode::None, 0);
  ops::sampler(s, out.logits, {}, none, q_.view().rows(0, k), {});
  record_candidate_sources(k, g_rows);
  ++*image_.draft_forwards;
}

int64_t EagleLane::grow_dynamic_tree(int64_t c) {
  const int64_t levels = step_levels_ = std::min<int64_t>(step_tree_.depth, image_tokens() - c);
  record_catch_up(c);
  for (int64_t level = 1; level < levels; ++level) record_device_level(level, c);
  return levels;
}

int64_t EagleLane::cut_rows(int64_t levels) const {
  const int64_t k = step_tree_.topk, kc = top_width();
  return 1 + std::min(step_tree_.nodes, kc + (levels - 1) * k * kc);
}

std::vector<EagleLane::Node> EagleLane::placeholder_tree(int64_t c, int64_t levels) const {
  const int64_t m = cut_rows(levels), scratch = t_.config().seq_len();
  std::vector<Node> tree = {root_node(c)};
  for (int64_t i = 1; i < m; ++i) tree.push_back({0, c, 0, scratch + i - 1, true, -1, -1});
  return tree;
}

void EagleLane::record_host_cut(int64_t c, int64_t levels) {
  const int64_t m = cut_rows(levels), n = m - 1;
  const CutQueryRows sink{cut_sink_.tokens.view().rows(0, n),
                          cut_sink_.rope.view().rows(0, n),
                          cut_sink_.slots.view().rows(0, n),
                          {cut_sink_.ranges.view().rows(0, n), cut_sink_.bits.view().rows(0, n)},
                          {}};
  record_cut(c, levels, sink, m);
}

void EagleLane::record_cut_into(const GptBatch& batch, int64_t c, int64_t levels, int64_t m, int64_t first_id,
                                const std::vector<int64_t>& blocks) {
  const int64_t n = m - 1;
  const ops::AttentionMask mask = batch.mask();
  for (int64_t r : blocks)
    record_cut(c, levels,
               {batch.token_ids().rows(first_id + 1, n),
                batch.rope_positions().rows(r + 1, n),
                batch.slots().rows(r + 1, n),
                {mask.ranges.rows(r + 1, n), mask.bits.rows(r + 1, n)},
                {mask.ranges.rows(r, 1), mask.bits.rows(r, 1)}},
               m);
}

void EagleLane::record_cut(int64_t c, int64_t levels, const CutQueryRows& queries, int64_t m) {
  TargetSession& t = t_;
  const int64_t k = step_tree_.topk, n = m - 1, R = 1 + (levels - 1) * k;
  ops::DraftTreeCut a;
  a.cand_tokens = top_rows(top_tokens_, 0, R);
  a.cand_values = top_rows(top_values_, 0, R);
  a.choice = choices_.view().reshape({choices_.numel()});
  a.state = tree_state_.view();
  a.k = static_cast<uint32_t>(k);
  a.levels = static_cast<uint32_t>(levels);
  a.state_width = static_cast<uint32_t>(tree_state_.shape()[2]);
  a.tree = cut_tree_.view().rows(0, m);
  a.tokens = queries.tokens;
  a.test_tokens = tokens_.view().rows(1, n);
  a.rope = queries.rope;
  a.slots = queries.slots;
  a.mask = queries.mask;
  a.prefix = queries.prefix;
  a.parents = tree_rows_.parents.view().rows(1, n);
  a.positions = tree_rows_.positions.view().rows(1, n);
  a.c = static_cast<uint32_t>(c);
  a.root_slot = static_cast<uint32_t>(cls_ + c - 1);
  a.grid = static_cast<uint32_t>(t.config().grid_size);
  a.image_tokens = static_cast<uint32_t>(image_tokens());
  a.scratch0 = static_cast<uint32_t>(t.config().seq_len());
  if (t.config().rope_layout == RopeLayout::sequence_1d) {
    a.seq_first = static_cast<uint32_t>(cls_);
    a.seq_table = static_cast<uint32_t>(t.config().rope_table_rows());
  }
  ops::draft_tree_cut(t.stream(), a);
}

std::vector<EagleLane::Node> EagleLane::read_cut_tree(int64_t c, int64_t m) {
  TargetSession& t = t_;
  std::vector<uint32_t> rows(static_cast<size_t>(m * 4));
  t.ctx().download(cut_tree_, 0, rows.data(), rows.size() * 4);
  std::vector<Node> tree = {root_node(c)};
  for (int64_t i = 1; i < m; ++i) {
    const uint32_t* r = rows.data() + 4 * i;
    if (r[2] == ops::kNoToken) break;  // padding: the rows after the cut's nodes
    const int64_t position = c + static_cast<int64_t>(r[1]) - 1;
    tree.push_back({static_cast<int32_t>(r[0]), position, checked_token(r[2], position), static_cast<int64_t>(r[3]),
                    static_cast<int64_t>(r[3]) >= t.config().seq_len(), -1, -1});
  }
  return tree;
}

std::vector<EagleLane::Node> EagleLane::record_static_tree(int64_t c) {
  const int64_t N = image_tokens();
  if (c == 0) return {root_node(c)};  // the first token is the target's own sample
  DraftTreeBuilder b(opt_.tree, N - c);
  drafter_slot_.assign(1, -1);
  g_row_.assign(1, 0);
  next_drafter_slot_ = 0;
  next_g_row_ = 1;
  record_catch_up(c);
  b.add_shape_children(0);
  record_candidates(b, 1, c);
  size_t level = 0;
  for (std::vector<int32_t> f = b.frontier(); !f.empty(); f = b.frontier(), ++level) {
    record_level(b, f, c, *level_batch(level));
    const size_t first = b.nodes().size();
    for (int32_t id : f) b.add_shape_children(id);
    record_candidates(b, first, c);
  }
  return verified_tree(b, c, true);
}

}  // namespace vkspec
