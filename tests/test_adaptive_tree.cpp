// adaptive-tree's size rule (decoding/adaptive_tree.h), without a device: the bisection and unit
// updates toward their bounds, where a step's size starts (the left neighbour's, the one above at
// a row start or everywhere with --init vertical), the node budget, and the options' checks.
#include <gtest/gtest.h>

#include "common/error.h"
#include "decoding/adaptive_tree.h"
#include "decoding/strategy_registry.h"

namespace vkspec {
namespace {

AdaptiveTreeOptions options() {
  AdaptiveTreeOptions o;
  o.start = {6, 10};
  o.min = {2, 2};
  o.max = {10, 10};
  o.nodes = 60;
  o.beta = 0.5;
  return o;
}

TEST(adaptive_tree, BisectionHalvesTheDistanceToTheBound) {
  const AdaptiveTreeShape s(options(), 4, 16);
  // accepted / depth = 3 / 6 >= 0.5: deeper (6 -> 8) and narrower (10 -> 6).
  EXPECT_EQ(s.update({6, 10}, 6, 3), (TreeSize{8, 6}));
  // 2 / 6 < 0.5: shallower (6 -> 4) and wider (6 -> 8).
  EXPECT_EQ(s.update({6, 6}, 6, 2), (TreeSize{4, 8}));
  // One short of a bound still reaches it; at the bound it stays.
  EXPECT_EQ(s.update({9, 3}, 9, 9), (TreeSize{10, 2}));
  EXPECT_EQ(s.update({10, 2}, 10, 10), (TreeSize{10, 2}));
  EXPECT_EQ(s.update({3, 9}, 3, 0), (TreeSize{2, 10}));
  EXPECT_EQ(s.update({2, 10}, 2, 0), (TreeSize{2, 10}));
  // alpha is against the levels the step ran (fewer than the depth near the image's end).
  EXPECT_EQ(s.update({6, 10}, 2, 1), (TreeSize{8, 6}));
}

TEST(adaptive_tree, UnitUpdateMovesByOne) {
  AdaptiveTreeOptions o = options();
  o.update = AdaptiveTreeOptions::Update::Unit;
  const AdaptiveTreeShape s(o, 4, 16);
  EXPECT_EQ(s.update({6, 10}, 6, 3), (TreeSize{7, 9}));
  EXPECT_EQ(s.update({6, 10}, 6, 2), (TreeSize{5, 10}));
  EXPECT_EQ(s.update({2, 10}, 2, 0), (TreeSize{2, 10}));
}

TEST(adaptive_tree, HorizontalStartsFromTheLeftAndAboveAtARowStart) {
  AdaptiveTreeShape s(options(), 4, 16);
  EXPECT_EQ(s.at(0), (TreeSize{6, 10}));
  s.record(0, 1, {6, 10}, 0, 0);  // the first token, no tree: the size is kept
  EXPECT_EQ(s.at(1), (TreeSize{6, 10}));
  s.record(1, 5, {6, 10}, 6, 3);  // positions 1..4 committed after a good step: {8, 6}
  EXPECT_EQ(s.at(5), (TreeSize{8, 6}));
  s.record(5, 6, {8, 6}, 8, 0);  // position 5 after a bad one: {5, 8}
  EXPECT_EQ(s.at(6), (TreeSize{5, 8}));
  s.record(6, 8, {5, 8}, 5, 1);  // positions 6, 7: {4, 9}
  // Row start 8: the one above (position 4, {8, 6}), not the previous row's end.
  EXPECT_EQ(s.at(8), (TreeSize{8, 6}));
  // Row 1's start: the one above (position 0, the first token's, kept), not position 3's.
  EXPECT_EQ(s.at(4), (TreeSize{6, 10}));
}

TEST(adaptive_tree, VerticalStartsFromAbove) {
  AdaptiveTreeOptions o = options();
  o.init = AdaptiveTreeOptions::Init::Vertical;
  AdaptiveTreeShape s(o, 4, 16);
  s.record(0, 1, {6, 10}, 0, 0);
  s.record(1, 5, {6, 10}, 6, 3);         // 1..4: {8, 6}
  s.record(5, 7, {8, 6}, 8, 0);          // 5, 6: {5, 8}
  EXPECT_EQ(s.at(7), (TreeSize{8, 6}));  // above 7 is 3
  EXPECT_EQ(s.at(5), (TreeSize{8, 6}));  // above 5 is 1
  EXPECT_EQ(s.at(2), (TreeSize{8, 6}));  // the first row: the left one
}

TEST(adaptive_tree, NodesAreTheBudgetOrTheTreesArea) {
  const AdaptiveTreeShape s(options(), 4, 16);
  EXPECT_EQ(s.nodes({6, 10}), 60);
  EXPECT_EQ(s.nodes({10, 10}), 60);
  EXPECT_EQ(s.nodes({3, 4}), 12);
  // A fixed budget: the same candidates at every size, and the largest tree sized for them.
  AdaptiveTreeOptions fixed = options();
  fixed.budget = AdaptiveTreeOptions::Budget::Fixed;
  const AdaptiveTreeShape f(fixed, 4, 16);
  EXPECT_EQ(f.nodes({3, 4}), 60);
  EXPECT_EQ(f.nodes({10, 2}), 60);
  EXPECT_EQ(adaptive_largest_tree(fixed).nodes, 60);
  EXPECT_EQ(parse_adaptive_tree_options(find_strategy("adaptive-tree").values({{"budget", "fixed"}})).budget,
            AdaptiveTreeOptions::Budget::Fixed);
}

TEST(adaptive_tree, OptionsRefuseAStartOutsideItsBounds) {
  const StrategyDescriptor& d = find_strategy("adaptive-tree");
  EXPECT_NO_THROW(parse_adaptive_tree_options(d.values({{"depth", "3"}, {"min-depth", "3"}})));
  try {
    parse_adaptive_tree_options(d.values({{"depth", "3"}, {"min-depth", "4"}}));
    FAIL() << "a start below its bound was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--min-depth <= --depth <= --max-depth"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_adaptive_tree_options(d.values({{"topk", "12"}})), Error);  // above --max-topk 10
  EXPECT_TRUE(d.lossless_for({}));
  EXPECT_FALSE(d.lossless_for({{"accept", "lantern"}}));
}

}  // namespace
}  // namespace vkspec
