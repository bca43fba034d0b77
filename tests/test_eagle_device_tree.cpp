// EAGLE-2's dynamic tree grown on the device (ops::top_tokens, then ops::draft_tree_level per
// level, as EagleStrategy records them) against DraftTreeBuilder fed the same draft distributions:
// every level's frontier and every candidate must be the builder's, ties and short rows included.
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

}  // namespace
}  // namespace vkspec
