// adaptive-tree (decoding/adaptive_tree_strategy.cpp) on the device: pinned to one size it is
// eagle's dynamic tree token for token (exact and LANTERN's rule alike), so the per-step widths
// and depths reach the device growth and cut without changing them; free, its steps' sizes follow
// decoding/adaptive_tree.h's rule replayed from the events (the tree cut on the device and, under
// LANTERN's rule, on the host), vary over an image, and bound what each step drafts. Its law is held to the exact one
// in test_exact_law.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "decoding/adaptive_tree.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;

class decoding_adaptive_tree : public testing::VulkanTest {
 protected:
  // A 6x6 target: rows long enough for the sizes to move within a row.
  const testing::TinyModels& wide_models() {
    static const testing::TinyModels m = [&] {
      testing::TinyGptSpec t;
      t.grid = 6;
      t.embed_scale = 1.0f;
      return testing::build_tiny_models(ctx(), testing::scratch_dir("adaptive_tree_models"), t);
    }();
    return m;
  }
};

MethodOptions pinned(const std::string& depth, const std::string& topk) {
  return {{"depth", depth},   {"min-depth", depth}, {"max-depth", depth}, {"topk", topk},
          {"min-topk", topk}, {"max-topk", topk},   {"nodes", "8"}};
}

TEST_F(decoding_adaptive_tree, PinnedToOneSizeIsEagle) {
  const MethodOptions eagle = {{"depth", "3"}, {"topk", "3"}, {"nodes", "8"}};
  const testing::Sample a = run_images(ctx(), by_name("eagle"), eagle, 40, 8);
  const testing::Sample b = run_images(ctx(), by_name("adaptive-tree"), pinned("3", "3"), 40, 8);
  EXPECT_EQ(a.grids, b.grids);
  EXPECT_EQ(a.nfe_per_image, b.nfe_per_image);
  // The relaxed rule reads the cut back before the forward: the same there.
  MethodOptions lantern = eagle;
  lantern.insert({{"drafter", "eagle"}, {"k", "3"}, {"delta", "0.3"}});
  MethodOptions relaxed = pinned("3", "3");
  relaxed.insert({{"accept", "lantern"}, {"k", "3"}, {"delta", "0.3"}});
  const testing::Sample c = run_images(ctx(), by_name("lantern"), lantern, 40, 8);
  const testing::Sample d = run_images(ctx(), by_name("adaptive-tree"), relaxed, 40, 8);
  EXPECT_EQ(c.grids, d.grids);
  EXPECT_EQ(c.nfe_per_image, d.nfe_per_image);
}

TEST_F(decoding_adaptive_tree, StepSizesFollowTheRule) {
  const MethodOptions given = {{"depth", "3"},    {"min-depth", "1"}, {"max-depth", "5"}, {"topk", "3"},
                               {"min-topk", "1"}, {"max-topk", "4"},  {"nodes", "12"}};
  const StrategyDescriptor& d = find_strategy("adaptive-tree");
  const AdaptiveTreeOptions o = parse_adaptive_tree_options(d.values(given));
  // The exact rule cuts the tree on the device, LANTERN's on the host: both at every size.
  MethodOptions relaxed = given;
  relaxed.insert({{"accept", "lantern"}, {"k", "3"}, {"delta", "0.3"}});
  testing::Sample s = run_images(ctx(), by_name("adaptive-tree"), given, 60, 6, true, &wide_models().set);
  const testing::Sample r = run_images(ctx(), by_name("adaptive-tree"), relaxed, 60, 6, true, &wide_models().set);
  s.events.insert(s.events.end(), r.events.begin(), r.events.end());
  std::set<std::pair<int32_t, int32_t>> seen;
  for (const std::vector<StepEvent>& events : s.events) {
    AdaptiveTreeShape replay(o, 6, 36);
    int64_t before = 0;
    for (const StepEvent& e : events) {
      const TreeSize expected = replay.at(before);
      ASSERT_EQ(e.tree_depth, expected.depth) << "step " << e.step;
      ASSERT_EQ(e.tree_width, expected.width) << "step " << e.step;
      seen.insert({e.tree_depth, e.tree_width});
      // A step drafts no deeper than its depth and verifies at most its node budget.
      int32_t furthest = static_cast<int32_t>(before) - 1;
      for (int32_t p : e.proposed) furthest = std::max(furthest, p);
      if (before > 0) {
        EXPECT_LE(furthest - before + 1, expected.depth + 1) << "step " << e.step;  // + the bonus
        EXPECT_LE(static_cast<int64_t>(e.proposed.size()), replay.nodes(expected) + 1) << "step " << e.step;
      }
      const int64_t levels = before > 0 ? std::min<int64_t>(expected.depth, 36 - before) : 0;
      replay.record(before, e.committed, expected, levels, e.committed - before - 1);
      before = e.committed;
    }
  }
  EXPECT_GE(seen.size(), 3u) << "the sizes never moved";
}

}  // namespace
}  // namespace vkspec
