// vvs's schedule and path choice (decoding/vvs_schedule.h) without a device, against the released
// code's rules: the uniform schedule's rounds and its guard, the depth-weighted path similarity on
// hand-computed codebooks, and the skipped path's truncation to the mean path length.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "decoding/strategy_registry.h"
#include "decoding/vvs_schedule.h"

namespace vkspec {
namespace {

TEST(vvs_schedule, UniformSkipsRoundsOneModuloTheInterval) {
  VvsOptions o;
  o.interval = 5;
  for (int64_t t = 0; t < 20; ++t) EXPECT_EQ(vvs_uniform_skips(o, t, 100), t % 5 == 1) << "round " << t;
  EXPECT_FALSE(vvs_uniform_skips(o, 6, kVvsFirstSkip - 1));  // too few tokens committed
  EXPECT_TRUE(vvs_uniform_skips(o, 6, kVvsFirstSkip));
}

TEST(vvs_schedule, SimilarityWeighsDepthsAndPairs) {
  // Codebook rows 0: (1, 0), 1: (0, 2), 2: (3, 3) (unit: (1, 0), (0, 1), (0.707, 0.707)).
  const std::vector<float> cb = {1, 0, 0, 2, 3, 3};
  const double r = std::sqrt(0.5), w0 = 1 / 1.9, w1 = 0.9 / 1.9;
  // Rows 0 and 2 are kept (row 1 is not read): paths {0, 1} and {2, 1}.
  EXPECT_NEAR(vvs_path_similarity({{0, 1}, {2, 2}, {2, 1}}, cb, 2, 0.9), w0 * r + w1 * 1.0, 1e-12);
  // A path that ends early adds nothing at the depths it lacks; three kept paths average 3 pairs.
  const double s = vvs_path_similarity({{0, 1}, {}, {0}, {}, {1, 1}}, cb, 2, 0.9);
  EXPECT_NEAR(s, (w0 * 1.0 + w0 * 0.0 + (w0 * 0.0 + w1 * 1.0)) / 3, 1e-12);
  EXPECT_EQ(vvs_path_similarity({{0, 1}, {1}}, cb, 2, 0.9), 0.0);  // one kept path
  EXPECT_THROW(vvs_path_similarity({{0}, {}, {7}}, cb, 2, 0.9), Error);
}

TEST(vvs_schedule, SkippedPathIsTruncatedToTheMeanLength) {
  // Drafts 3, 1, 2: entries with the root 4 + 2 + 3 = 9, mean 3, so at most 2 drafts.
  const std::vector<std::vector<int32_t>> paths = {{1, 2, 3}, {4}, {5, 6}};
  EXPECT_EQ(vvs_choose_skip(paths, 0.0f).path, 0u);
  EXPECT_EQ(vvs_choose_skip(paths, 0.0f).drafts, 2);
  EXPECT_EQ(vvs_choose_skip(paths, 0.5f).path, 1u);
  EXPECT_EQ(vvs_choose_skip(paths, 0.5f).drafts, 1);
  EXPECT_EQ(vvs_choose_skip(paths, 0.99f).path, 2u);
  EXPECT_EQ(vvs_choose_skip(paths, 0.99f).drafts, 2);
  // A mean of one (the root alone) would commit nothing: at least one draft.
  EXPECT_EQ(vvs_choose_skip({{1}}, 0.3f).drafts, 1);
  EXPECT_THROW(vvs_choose_skip({}, 0.3f), Error);
}

TEST(vvs_schedule, OptionsAreTheReleasedDefaults) {
  const StrategyDescriptor& d = find_strategy("vvs");
  const OptionValues v = d.values({});
  EXPECT_EQ(v.integer("depth"), 5);
  EXPECT_EQ(v.integer("topk"), 10);
  EXPECT_EQ(v.integer("nodes"), 58);
  EXPECT_EQ(v.integer("interval"), 5);
  EXPECT_EQ(v.choice("accept"), "lantern");
  EXPECT_FALSE(d.lossless_for({{"accept", "exact"}}));  // skipped rounds are never verified
  EXPECT_THROW(d.values({{"interval", "1"}}), Error);
  EXPECT_TRUE(d.needs_for({{"schedule", "dynamic"}}).tokenizer);
  EXPECT_FALSE(d.needs_for({}).tokenizer);
}

}  // namespace
}  // namespace vkspec
