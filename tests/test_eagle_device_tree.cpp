// EAGLE-2's dynamic tree grown on the device (ops::top_tokens, then ops::draft_tree_level per
// level, as EagleStrategy records them) against DraftTreeBuilder fed the same draft distributions:
// every level's frontier and every candidate must be the builder's, ties and short rows included;
// and ops::draft_tree_cut of the grown tree must be DraftTreeBuilder::select's tree, node for node.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "decoding/eagle_tree.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/speculative.h"
#include "support/vulkan_test.h"

namespace vkspec {
namespace {

class eagle_device_tree : public testing::VulkanTest {};

// Draft distributions of a level's rows: values from a small set (tied products), some rows with
// a few tokens of mass only (as a top-k filter leaves them), some tiny (products below FLT_MIN).
std::vector<float> level_q(std::mt19937& rng, int64_t rows, int64_t V) {
  const float levels[] = {0.3f, 0.2f, 0.1f, 0.05f, 1e-21f, 1e-25f};
  std::vector<float> q(static_cast<size_t>(rows * V), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const bool sparse = rng() % 4 == 0;
    for (int64_t i = 0; i < V; ++i)
      if (!sparse || rng() % V < 3) q[static_cast<size_t>(r * V + i)] = levels[rng() % 6];
  }
  return q;
}

std::vector<uint32_t> download(Context& ctx, const Tensor& t) {
  std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

TEST_F(eagle_device_tree, LevelsPickTheBuildersFrontiers) {
  Context& c = ctx();
  const int64_t V = 300, k = 5, depth = 5, width = 2 + depth, words = 8, scratch0 = 100;
  EagleTreeOptions o;
  o.kind = EagleTreeKind::Dynamic;
  o.depth = depth;
  o.topk = k;
  o.nodes = 40;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    Tensor q = c.tensor(DType::F32, {k, V}, "q"), cand_t = c.tensor(DType::U32, {k, k}, "top tokens");
    Tensor cand_v = c.tensor(DType::F32, {k, k}, "top q"), state = c.tensor(DType::U32, {depth + 1, k, width}, "state");
    Tensor choice = c.tensor(DType::U32, {k}, "choice"), tokens = c.tensor(DType::U32, {k}, "tokens");
    Tensor gather = c.tensor(DType::U32, {k}, "gather"), ranges = c.tensor(DType::U32, {k, 2}, "ranges");
    Tensor bits = c.tensor(DType::U32, {k, words}, "bits");
    std::vector<uint32_t> root(static_cast<size_t>(width), 0);
    root[0] = 0x3F800000u;  // 1.0f
    root[1] = 1;
    c.upload(state, 0, root.data(), root.size() * 4);
    DraftTreeBuilder b(o, 100);
    std::vector<int32_t> row_of(1, 0), f = {0};
    for (int64_t level = 0; level + 1 < depth; ++level) {
      const int64_t m = level == 0 ? 1 : k;
      const std::vector<float> qh = level_q(rng, m, V);
      c.upload(q, 0, qh.data(), qh.size() * 4);
      for (size_t j = 0; j < f.size(); ++j) b.add_children(f[j], qh.data() + j * V, V);
      ops::DraftTreeLevel a;
      a.cand_tokens = cand_t.view().rows(0, m);
      a.cand_values = cand_v.view().rows(0, m);
      a.state = state.view();
      a.level = static_cast<uint32_t>(level);
      a.state_width = static_cast<uint32_t>(width);
      a.choice = choice.view();
      a.tokens = tokens.view();
      a.gather_ids = gather.view();
      a.mask = {ranges.view(), bits.view()};
      a.lo = 1, a.hi = 50, a.scratch0 = static_cast<uint32_t>(scratch0);
      CommandStream s(c);
      ops::top_tokens(s, q.view().rows(0, m), static_cast<uint32_t>(k), a.cand_tokens, a.cand_values);
      ops::draft_tree_level(s, a);
      s.submit_and_wait();
      const std::vector<uint32_t> picks = download(c, choice), toks = download(c, tokens);
      f = b.frontier();
      row_of.resize(b.nodes().size(), -1);
      for (int64_t j = 0; j < k; ++j) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " depth " + std::to_string(level + 1) + " row " +
                     std::to_string(j));
        if (j >= static_cast<int64_t>(f.size())) {
          EXPECT_EQ(picks[static_cast<size_t>(j)], ops::kNoToken);
          continue;
        }
        const DraftTreeNode& n = b.nodes()[static_cast<size_t>(f[static_cast<size_t>(j)])];
        EXPECT_EQ(picks[static_cast<size_t>(j)],
                  static_cast<uint32_t>(row_of[static_cast<size_t>(n.parent)] * k + n.rank));
        EXPECT_EQ(toks[static_cast<size_t>(j)], n.token);
        row_of[static_cast<size_t>(f[static_cast<size_t>(j)])] = static_cast<int32_t>(j);
      }
    }
  }
}

// Grows a dynamic tree of `depth` levels on the device as EagleStrategy records it (every level's
// top tokens in one table, by row) and in b; then cuts it with ops::draft_tree_cut into m rows.
std::vector<uint32_t> grow_and_cut(Context& c, DraftTreeBuilder& b, std::mt19937& rng, int64_t V, int64_t k,
                                   int64_t depth, int64_t m) {
  const int64_t R = 1 + (depth - 1) * k, width = 2 + depth, n = m - 1, words = 16;
  Tensor q = c.tensor(DType::F32, {k, V}, "q"), cand_t = c.tensor(DType::U32, {R, k}, "top tokens");
  Tensor cand_v = c.tensor(DType::F32, {R, k}, "top q"), state = c.tensor(DType::U32, {depth + 1, k, width}, "state");
  Tensor choice = c.tensor(DType::U32, {std::max<int64_t>(depth - 1, 1), k}, "choice");
  Tensor tokens = c.tensor(DType::U32, {k}, "tokens"), gather = c.tensor(DType::U32, {k}, "gather");
  Tensor ranges = c.tensor(DType::U32, {k, 2}, "ranges"), bits = c.tensor(DType::U32, {k, words}, "bits");
  std::vector<uint32_t> root(static_cast<size_t>(width), 0);
  root[0] = 0x3F800000u;  // 1.0f
  root[1] = 1;
  c.upload(state, 0, root.data(), root.size() * 4);
  std::vector<int32_t> f = {0};
  for (int64_t level = 0; level < depth; ++level) {
    const int64_t m_rows = level == 0 ? 1 : k, base = level == 0 ? 0 : 1 + (level - 1) * k;
    const std::vector<float> qh = level_q(rng, m_rows, V);
    c.upload(q, 0, qh.data(), qh.size() * 4);
    for (size_t j = 0; j < f.size(); ++j) b.add_children(f[j], qh.data() + j * V, V);
    CommandStream s(c);
    ops::top_tokens(s, q.view().rows(0, m_rows), static_cast<uint32_t>(k), cand_t.view().rows(base, m_rows),
                    cand_v.view().rows(base, m_rows));
    if (level + 1 < depth) {
      ops::DraftTreeLevel a;
      a.cand_tokens = cand_t.view().rows(base, m_rows);
      a.cand_values = cand_v.view().rows(base, m_rows);
      a.state = state.view();
      a.level = static_cast<uint32_t>(level);
      a.state_width = static_cast<uint32_t>(width);
      a.choice = choice.view().rows(level, 1).reshape({k});
      a.tokens = tokens.view();
      a.gather_ids = gather.view();
      a.mask = {ranges.view(), bits.view()};
      a.lo = 1, a.hi = 50, a.scratch0 = 100;
      ops::draft_tree_level(s, a);
    }
    s.submit_and_wait();
    f = b.frontier();
  }
  Tensor tree = c.tensor(DType::U32, {m, 4}, "tree"), qt = c.tensor(DType::U32, {n}, "query tokens");
  Tensor rope = c.tensor(DType::I32, {n, 3}, "rope"), slots = c.tensor(DType::U32, {n}, "slots");
  Tensor par = c.tensor(DType::I32, {n}, "parents"), pos = c.tensor(DType::U32, {n, 2}, "positions");
  Tensor qr = c.tensor(DType::U32, {n, 2}, "query ranges"), qb = c.tensor(DType::U32, {n, words}, "query bits");
  ops::DraftTreeCut a;
  a.cand_tokens = cand_t.view();
  a.cand_values = cand_v.view();
  a.choice = choice.view().reshape({choice.numel()});
  a.state = state.view();
  a.k = static_cast<uint32_t>(k), a.levels = static_cast<uint32_t>(depth), a.state_width = static_cast<uint32_t>(width);
  a.tree = tree.view(), a.tokens = qt.view(), a.rope = rope.view(), a.slots = slots.view();
  a.parents = par.view(), a.positions = pos.view(), a.mask = {qr.view(), qb.view()};
  Tensor tt = c.tensor(DType::U32, {n}, "test tokens");
  a.test_tokens = tt.view();
  a.c = 20, a.root_slot = 20, a.grid = 16, a.image_tokens = 256, a.scratch0 = 256;
  CommandStream s(c);
  ops::draft_tree_cut(s, a);
  s.submit_and_wait();
  return download(c, tree);
}

TEST_F(eagle_device_tree, CutIsTheBuildersSelection) {
  const int64_t V = 300, k = 5, depth = 4;
  for (int64_t nodes : {3, 12, 40, 200}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("nodes " + std::to_string(nodes) + " seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      EagleTreeOptions o;
      o.depth = depth, o.topk = k, o.nodes = nodes;
      DraftTreeBuilder b(o, 100);
      const int64_t m = 1 + std::min<int64_t>(nodes, k + (depth - 1) * k * k);
      const std::vector<uint32_t> got = grow_and_cut(ctx(), b, rng, V, k, depth, m);
      const std::vector<int32_t> sel = b.select();
      std::vector<int32_t> row(b.nodes().size(), -1);
      row[0] = 0;
      for (int64_t i = 1; i < m; ++i) {
        const uint32_t* r = got.data() + 4 * i;
        if (i >= static_cast<int64_t>(sel.size())) {  // padding
          EXPECT_EQ(r[2], ops::kNoToken) << "row " << i;
          continue;
        }
        const DraftTreeNode& nd = b.nodes()[static_cast<size_t>(sel[static_cast<size_t>(i)])];
        row[static_cast<size_t>(sel[static_cast<size_t>(i)])] = static_cast<int32_t>(i);
        EXPECT_EQ(r[2], nd.token) << "row " << i;
        EXPECT_EQ(r[1], static_cast<uint32_t>(nd.depth)) << "row " << i;
        EXPECT_EQ(static_cast<int32_t>(r[0]), row[static_cast<size_t>(nd.parent)]) << "row " << i;
      }
    }
  }
}

}  // namespace
}  // namespace vkspec
