// sjd-pac (decoding/sjd_pac_strategy.h): the tree's shape, the event contract and option checks,
// and the two-sample chi-square test of test_decoding_lossless.cpp against ar on the tiny model
// (3x3 tokens, vocabulary 8; CFG 2, top-k 2, top-p 0.9; 2000 images, positions 0, 4, 8 and the
// pair 7+8, significance 0.001): the exact rule (--path first) must pass it. The released code's
// rule (--path longest) passes it too at 2000 images (the tiny random targets' continuations
// barely depend on the previous token, which its bias feeds on; docs/methods.md gives the
// statistics); tools/sjd_pac_path_bias.py computes its bias exactly on a toy model, which is why
// the registry calls it lossy.
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

constexpr int kImages = 2000;
constexpr uint64_t kArSeeds = 1000000;

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

class sjd_pac : public testing::VulkanTest {
 protected:
  const Sample& ar() {
    static const Sample s = testing::cached_run_images(ctx(), "ar", {}, kArSeeds, kImages);
    return s;
  }
  // Whether the method's images match ar's at every tested position; prints the statistics.
  bool matches_ar(const std::string& label, const MethodOptions& options) {
    const Sample& ref = ar();
    const Sample s = run_images(ctx(), by_name("sjd-pac"), options, 0, kImages);
    const size_t V = static_cast<size_t>(testing::kTinyVocab);
    bool same = true;
    std::string report;
    for (const auto& [pos, pair] :
         std::vector<std::pair<size_t, bool>>{{0, false}, {4, false}, {8, false}, {7, true}}) {
      std::vector<uint64_t> a(pair ? V * V : V), b(a.size());
      for (const auto& g : s.grids)
        ++a[pair ? static_cast<size_t>(g[pos]) * V + static_cast<size_t>(g[pos + 1]) : static_cast<size_t>(g[pos])];
      for (const auto& g : ref.grids)
        ++b[pair ? static_cast<size_t>(g[pos]) * V + static_cast<size_t>(g[pos + 1]) : static_cast<size_t>(g[pos])];
      const testing::ChiSquare c = testing::two_sample_chi_square(a, b);
      same = same && c.fits();
      report +=
          "  position " + std::to_string(pos) + (pair ? "+" + std::to_string(pos + 1) : "") + ": " + c.str() + "\n";
    }
    std::printf("%s: %.2f target forwards per image (ar %.2f)\n%s", label.c_str(), s.nfe_per_image, ref.nfe_per_image,
                report.c_str());
    return same;
  }
};

// The exact rule: the coupled draft plus distinct draws of q' (without replacement), each tested
// with q' less the earlier candidates; first accepted candidate descended into.
TEST_F(sjd_pac, FirstAcceptedPathMatchesAr) {
  EXPECT_TRUE(matches_ar("sjd-pac --width 2 --depth 2 --window 6", {{"width", "2"}, {"depth", "2"}, {"window", "6"}}));
}

// Three candidates over two depths: top-k 2 leaves q' two tokens, so the third candidate is never
// found after the first step (pools shrink, the chain grows) while the uniform first drafts have three.
TEST_F(sjd_pac, FirstAcceptedPathWiderTreeMatchesAr) {
  EXPECT_TRUE(matches_ar("sjd-pac --width 3 --depth 3 --window 16",
                         {{"width", "3"}, {"depth", "3"}, {"window", "16"}}));
}

// New positions drafted from the token above (a point-mass q, one candidate at a tree depth).
TEST_F(sjd_pac, InitAboveMatchesAr) {
  EXPECT_TRUE(matches_ar("sjd-pac --width 2 --depth 2 --window 6 --init above",
                         {{"width", "2"}, {"depth", "2"}, {"window", "6"}, {"init", "above"}}));
}

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
