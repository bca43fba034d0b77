// sjd-pac (decoding/sjd_pac_strategy.h): the tree's shape, the registry's lossless flag, the event
// contract and option checks. Exactness is test_exact_law.cpp's: --path first passes the exact-law
// test (K 3 D 3, K 2 D 2, --init above, three images per forward) and the released rule
// (--path longest) is rejected by it; tools/sjd_pac_path_bias.py computes the bias exactly on a
// toy step.
#include <cstdio>
#include <string>

#include "decoding/sjd_pac_strategy.h"
#include "tests/support/cached_sample.h"
#include "tests/support/chi_square.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;
using testing::Sample;
using testing::tiny_models;

TEST(sjd_pac_shape, TreeAndChainOfTheReleasedDefaults) {
  EXPECT_EQ(sjd_pac_tree_nodes(3, 3), 13);
  EXPECT_EQ(sjd_pac_tree_nodes(4, 3), 21);
  EXPECT_EQ(sjd_pac_tree_nodes(1, 3), 3);
  EXPECT_EQ(sjd_pac_tree_nodes(5, 1), 1);
  // K 3, D 3, L 64: 13 tree nodes, the chain fills the budget, the main path has 54 nodes.
  const std::vector<SjdPacNode> s = sjd_pac_shape({3, 3}, 64 - 13);
  ASSERT_EQ(s.size(), 64u);
  int main_path = 0, shown = 0;
  for (const SjdPacNode& n : s) {
    main_path += n.canonical;
    shown += n.first_pick;
  }
  EXPECT_EQ(main_path, 54);
  EXPECT_EQ(shown, 1 + 3 + 3 + 51);  // the root, each (depth, pick) once, the chain
  // Every depth-2 node's candidates are its own children: parents 1, 2, 3 with picks 0, 1, 2.
  for (int i = 4; i < 13; ++i) {
    EXPECT_EQ(s[static_cast<size_t>(i)].parent, 1 + (i - 4) / 3);
    EXPECT_EQ(s[static_cast<size_t>(i)].pick, (i - 4) % 3);
  }
  // The chain continues the branch-0 path (node 4, the first of depth 2), one node per depth.
  EXPECT_EQ(s[13].parent, 4);
  EXPECT_EQ(s[13].depth, 3);
  EXPECT_EQ(s[63].parent, 62);
  EXPECT_EQ(s[63].depth, 53);
  // A depth with fewer candidates (the draws found fewer new tokens) shrinks the tree only.
  const std::vector<SjdPacNode> cut = sjd_pac_shape({3, 1}, 5);
  EXPECT_EQ(cut.size(), 1u + 3 + 3 + 5);
}

TEST(sjd_pac_registry, OnlyTheFirstAcceptedRuleIsLossless) {
  const StrategyDescriptor& d = find_strategy("sjd-pac");
  EXPECT_TRUE(d.lossless_for({}));
  EXPECT_FALSE(d.lossless_for({{"path", "longest"}}));
  EXPECT_EQ(d.max_queries_for({}, GptConfig{}), 64 + 3 - 1);
}

class sjd_pac : public testing::VulkanTest {};

// Runs every step through the fixture's event checks; the same seed gives the same steps.
TEST_F(sjd_pac, EventsAreConsistentAndSeedsReproduce) {
  for (const std::string path : {"first", "longest"}) {
    const MethodOptions o = {{"width", "3"}, {"depth", "3"}, {"window", "16"}, {"path", path}};
    const Sample left =
        run_images(ctx(), by_name("sjd-pac"), {{"window", "16"}, {"init", "left"}, {"path", path}}, 5, 4);
    EXPECT_LT(left.nfe_per_image, 9.0) << path;
    const Sample a = run_images(ctx(), by_name("sjd-pac"), o, 5, 12, true);
    const Sample b = run_images(ctx(), by_name("sjd-pac"), o, 5, 12, true);
    EXPECT_EQ(a.grids, b.grids) << path;
    for (size_t i = 0; i < a.events.size(); ++i) {
      ASSERT_EQ(a.events[i].size(), b.events[i].size()) << path;
      for (size_t k = 0; k < a.events[i].size(); ++k) {
        EXPECT_EQ(a.events[i][k].proposed_tokens, b.events[i][k].proposed_tokens) << path;
        EXPECT_EQ(a.events[i][k].accepted, b.events[i][k].accepted) << path;
        EXPECT_EQ(a.events[i][k].resampled, b.events[i][k].resampled) << path;
        // the first step proposes the tree (each candidate once) and the chain (16 - 13 nodes)
        if (k == 0) {
          EXPECT_EQ(a.events[i][k].proposed.size(), 3u + 3u + 3u) << path;
          // the viewer's groups: the tree's two positions, then the chain's three
          EXPECT_EQ(a.events[i][k].groups, (std::vector<std::vector<int32_t>>{{0, 1}, {2, 3, 4}})) << path;
        }
      }
    }
    EXPECT_LT(a.nfe_per_image, 9.0) << path;
  }
}

void expect_error(const MethodOptions& options, const std::string& fragment) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.options = options;
  try {
    make_strategy("sjd-pac", tiny_models(testing::test_context()).set, in);
    ADD_FAILURE() << "expected an error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(sjd_pac, BadOptionsAreNamed) {
  expect_error({{"width", "0"}, {"window", "8"}}, "--width must be in [1, 8]");
  expect_error({{"width", "9"}, {"window", "8"}}, "--width must be in [1, 8]");
  expect_error({{"depth", "0"}, {"window", "8"}}, "--depth must be in [1, 8]");
  expect_error({{"window", "1"}}, "--window must be in [2, 1024]");
  expect_error({{"path", "shortest"}, {"window", "8"}}, "--path must be one of first, longest");
  expect_error({{"init", "heads"}, {"window", "8"}}, "--init must be one of random, left, above");
  expect_error({{"width", "3"}, {"depth", "3"}, {"window", "12"}},
               "make a tree of 13 nodes with the root, more than --window 12");
  expect_error({}, "max_queries");  // L 64 + 2 repairs: more than the tiny target was loaded for
}

}  // namespace
}  // namespace vkspec
