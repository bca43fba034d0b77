// Hawk beyond the lossless statistics (test_decoding_lossless.cpp): the tree shapes (the paper's
// Cartesian product, cut by the node budget, and the chain), the candidate tree really has
// alternates and they are accepted (so the multi-draft path is exercised), the Cartesian walk goes
// on below an accepted alternate (a chain's alternates are leaves), each head direction proposes
// only its own candidates, the registry sizes the forward for the largest tree, forwards drop
// below ar's, draft heads compute what the contract says (also for the picked rows hawk and ssd
// project), and the strategy needs its heads and checks its options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "decoding/hawk_tree.h"
#include "decoding/strategy_registry.h"
#include "engine/checks/op_check.h"
#include "engine/model/draft_heads.h"
#include "engine/model/safetensors.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class decoding_hawk : public testing::VulkanTest {};

// How many nodes each depth holds.
std::vector<int> depth_counts(const std::vector<HawkTreeNode>& t) {
  std::vector<int> c;
  for (size_t i = 1; i < t.size(); ++i) {
    if (static_cast<size_t>(t[i].depth) > c.size()) c.resize(static_cast<size_t>(t[i].depth));
    ++c[static_cast<size_t>(t[i].depth - 1)];
  }
  return c;
}

TEST(hawk_tree, CartesianHoldsEveryCombinationOfThePools) {
  const std::vector<HawkTreeNode> t = hawk_tree_shape(HawkTreeKind::Cartesian, {3, 2, 3}, 120);
  ASSERT_EQ(t.size(), 1u + 3 + 6 + 18);
  EXPECT_EQ(depth_counts(t), (std::vector<int>{3, 6, 18}));
  // Every node below the leaves' depth has the next pool whole as children, in pool order, and
  // each (depth, pick) is listed as a proposal once.
  const std::vector<int> pools = {3, 2, 3, 0};
  std::vector<int> shown(3);
  for (size_t p = 0; p < t.size(); ++p) {
    std::vector<int> picks;
    for (size_t c = p + 1; c < t.size(); ++c)
      if (t[c].parent == static_cast<int32_t>(p)) {
        picks.push_back(t[c].pick);
        EXPECT_EQ(t[c].depth, t[p].depth + 1);
      }
    std::vector<int> want(static_cast<size_t>(pools[static_cast<size_t>(t[p].depth)]));
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<int>(i);
    EXPECT_EQ(picks, want) << "node " << p;
    if (p > 0) shown[static_cast<size_t>(t[p].depth - 1)] += t[p].first_pick;
  }
  EXPECT_EQ(shown, (std::vector<int>{3, 2, 3}));
  // One canonical (own-slot) node per depth: the first.
  for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i].canonical, t[i].depth != t[i - 1].depth) << i;
  EXPECT_EQ(hawk_tree_max_nodes(HawkTreeKind::Cartesian, 4, 3, 1000), 120);
  EXPECT_EQ(hawk_tree_max_nodes(HawkTreeKind::Cartesian, 4, 3, 12), 12);
}

TEST(hawk_tree, BudgetCutsBreadthFirstAndAnEmptyPoolEndsTheTree) {
  const std::vector<HawkTreeNode> t = hawk_tree_shape(HawkTreeKind::Cartesian, {3, 3, 3, 3}, 20);
  ASSERT_EQ(t.size(), 21u);
  EXPECT_EQ(depth_counts(t), (std::vector<int>{3, 9, 8}));  // depth 3 cut after its first parents
  EXPECT_EQ(t[13].parent, 4);                               // the first depth-2 node's children first
  EXPECT_EQ(depth_counts(hawk_tree_shape(HawkTreeKind::Cartesian, {2, 0, 3}, 120)), (std::vector<int>{2}));
  EXPECT_THROW(hawk_tree_shape(HawkTreeKind::Cartesian, {1}, 0), Error);
}

TEST(hawk_tree, ChainContinuesOnlyThePrimary) {
  const std::vector<HawkTreeNode> t = hawk_tree_shape(HawkTreeKind::Chain, {3, 1, 2}, 120);
  ASSERT_EQ(t.size(), 7u);
  const std::vector<int32_t> parents = {-1, 0, 0, 0, 1, 4, 4};
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].parent, parents[i]) << i;
  EXPECT_EQ(hawk_tree_max_nodes(HawkTreeKind::Chain, 4, 3, 120), 12);
  EXPECT_EQ(parse_hawk_tree_kind("chain"), HawkTreeKind::Chain);
  EXPECT_THROW(parse_hawk_tree_kind("tree"), Error);
}

// The registry sizes the target for the largest tree: the root, the nodes (cut by the budget and by
// what `depth` depths can hold), one repair per depth; the chain as it always was.
TEST(hawk_tree, MaxQueriesCoverTheLargestTree) {
  GptConfig cfg;
  cfg.grid_size = 16;
  const StrategyDescriptor& d = find_strategy("hawk");
  EXPECT_EQ(d.max_queries_for({}, cfg), 1 + 12 + 4);
  EXPECT_EQ(d.max_queries_for({{"nodes", "120"}}, cfg), 1 + 120 + 4);
  EXPECT_EQ(d.max_queries_for({{"nodes", "120"}, {"depth", "2"}}, cfg), 1 + 3 + 9 + 2);
  EXPECT_EQ(d.max_queries_for({{"tree", "chain"}}, cfg), 1 + 3 * 4 + 1);
}

// Positions proposed more than once in a step (a pool's later entries), and accepted ones whose
// token is such a later candidate's (not the first one's).
struct Alternates {
  int64_t proposed = 0, accepted = 0;
  int64_t continued = 0;  // accepted alternates below which the walk accepted another candidate
};

Alternates count_alternates(const testing::Sample& s) {
  Alternates a;
  for (const auto& events : s.events)
    for (const StepEvent& e : events) {
      // The walk's last token (the residual's sample) is the step's highest committed position.
      int32_t last = -1;
      for (int32_t p : e.accepted) last = std::max(last, p);
      for (int32_t p : e.resampled) last = std::max(last, p);
      for (size_t i = 0; i < e.proposed.size(); ++i) {
        const bool repeat =
            std::find(e.proposed.begin(), e.proposed.begin() + i, e.proposed[i]) != e.proposed.begin() + i;
        if (!repeat) continue;
        ++a.proposed;
        const size_t first = std::find(e.proposed.begin(), e.proposed.end(), e.proposed[i]) - e.proposed.begin();
        const bool taken = std::find(e.accepted.begin(), e.accepted.end(), e.proposed[i]) != e.accepted.end() &&
                           e.grid[static_cast<size_t>(e.proposed[i])] == e.proposed_tokens[i] &&
                           e.proposed_tokens[first] != e.proposed_tokens[i];
        a.accepted += taken;
        // Accepted drafts are the step's committed positions before its last one.
        a.continued += taken && e.proposed[i] + 1 < last;
      }
    }
  return a;
}

TEST_F(decoding_hawk, CartesianWalkContinuesBelowAcceptedAlternates) {
  const testing::Sample s =
      testing::run_images(ctx(), testing::by_name("hawk"), {{"tree", "cartesian"}, {"nodes", "40"}}, 500, 150, true);
  const Alternates a = count_alternates(s);
  EXPECT_GT(a.accepted, 0);
  EXPECT_GT(a.continued, 0);  // impossible in a chain, whose alternates are leaves
  const testing::Sample c = testing::run_images(ctx(), testing::by_name("hawk"), {{"tree", "chain"}}, 500, 150, true);
  EXPECT_EQ(count_alternates(c).continued, 0);
}

// Horizontal heads alone give one candidate per position (no alternates); vertical heads alone
// propose nothing in the first row, which no vertical head reaches.
TEST_F(decoding_hawk, EachDirectionProposesOnlyItsOwnCandidates) {
  const testing::Sample h =
      testing::run_images(ctx(), testing::by_name("hawk"), {{"directions", "horizontal"}}, 500, 60, true);
  EXPECT_EQ(count_alternates(h).proposed, 0);
  const testing::Sample v =
      testing::run_images(ctx(), testing::by_name("hawk"), {{"directions", "vertical"}}, 500, 60, true);
  int64_t drafted = 0;
  for (const auto& events : v.events)
    for (const StepEvent& e : events) {
      if (e.proposed.size() == 1 && e.rejected.empty()) continue;  // a step without candidates lists its sample
      for (int32_t p : e.proposed) EXPECT_GE(p, testing::kTinyGrid) << "step " << e.step;
      drafted += static_cast<int64_t>(e.proposed.size());
    }
  EXPECT_GT(drafted, 0);
  EXPECT_LT(v.nfe_per_image, static_cast<double>(testing::kTinyGrid * testing::kTinyGrid));
}

TEST_F(decoding_hawk, AlternatesAreProposedAndAccepted) {
  const testing::Sample s = testing::run_images(ctx(), testing::by_name("hawk"), {}, 500, 150, true);
  const Alternates a = count_alternates(s);
  EXPECT_GT(a.proposed, 0);
  EXPECT_GT(a.accepted, 0);
  EXPECT_LT(s.nfe_per_image, static_cast<double>(testing::kTinyGrid * testing::kTinyGrid));
}

TEST_F(decoding_hawk, HeadLogitsFollowTheContract) {
  const testing::TinyModels& m = testing::tiny_models(ctx());
  DraftHeads& heads = *m.heads;
  const int64_t D = m.target->config().dim, V = m.target->config().vocab_size, R = 3;
  std::vector<float> h(static_cast<size_t>(R * D));
  testing::TinyNormal rng(9);
  for (float& x : h) x = rng.next();
  Tensor th = upload_floats(ctx(), h, DType::F32, {R, D}, "hidden");
  SafetensorsFile target(m.target->path()), file(heads.path());
  const std::vector<float> out_w = target.read_f32("output.weight");
  for (int k = 0; k < static_cast<int>(heads.heads().size()); ++k) {
    CommandStream s(ctx());
    const TensorView logits = heads.logits(s, k, th.view());
    Tensor back = ctx().tensor(DType::F32, {R, V}, "logits", MemoryUsage::Readback);
    s.copy(logits, back.view());
    s.submit_and_wait();
    const std::vector<float> got = download_floats(ctx(), back);
    const std::string p = "draft_heads." + heads.heads()[static_cast<size_t>(k)].name + ".linear.";
    const std::vector<float> w = file.read_f32(p + "weight"), b = file.read_f32(p + "bias");
    for (int64_t r = 0; r < R; ++r) {
      std::vector<double> y(static_cast<size_t>(D));
      for (int64_t i = 0; i < D; ++i) {
        double z = b[static_cast<size_t>(i)];
        for (int64_t j = 0; j < D; ++j)
          z += double(w[static_cast<size_t>(i * D + j)]) * h[static_cast<size_t>(r * D + j)];
        y[static_cast<size_t>(i)] = h[static_cast<size_t>(r * D + i)] + z / (1.0 + std::exp(-z));
      }
      for (int64_t v = 0; v < V; ++v) {
        double l = 0;
        for (int64_t i = 0; i < D; ++i) l += double(out_w[static_cast<size_t>(v * D + i)]) * y[static_cast<size_t>(i)];
        EXPECT_NEAR(got[static_cast<size_t>(r * V + v)], l, 1e-4 * (1 + std::abs(l))) << "head " << k;
      }
    }
  }
  EXPECT_EQ(heads.index("v2"), static_cast<int>(heads.heads().size()) - 1);
  EXPECT_EQ(heads.heads().back().offset, 2 * testing::kTinyGrid);
}

// logits_at (what hawk and ssd run): any (head, row) pairs in any order give the rows logits(k)
// gives, and picks outside the heads or rows are errors.
TEST_F(decoding_hawk, HeadLogitsAtPickedRowsMatchEachHead) {
  const testing::TinyModels& m = testing::tiny_models(ctx());
  DraftHeads& heads = *m.heads;
  const int64_t D = m.target->config().dim, V = m.target->config().vocab_size, R = 3;
  const int H = static_cast<int>(heads.heads().size());
  std::vector<float> h(static_cast<size_t>(R * D));
  testing::TinyNormal rng(11);
  for (float& x : h) x = rng.next();
  Tensor th = upload_floats(ctx(), h, DType::F32, {R, D}, "hidden");
  auto run = [&](const std::function<TensorView(CommandStream&)>& record, int64_t rows) {
    CommandStream s(ctx());
    const TensorView logits = record(s);
    Tensor back = ctx().tensor(DType::F32, {rows, V}, "logits", MemoryUsage::Readback);
    s.copy(logits, back.view());
    s.submit_and_wait();
    return download_floats(ctx(), back);
  };
  const std::vector<std::pair<int, int64_t>> picks = {{1, 2}, {0, 0}, {H - 1, 1}, {1, 0}, {0, 0}};
  const std::vector<float> got =
      run([&](CommandStream& s) { return heads.logits_at(s, th.view(), picks); }, static_cast<int64_t>(picks.size()));
  for (size_t i = 0; i < picks.size(); ++i) {
    const auto [k, r] = picks[i];
    const std::vector<float> want = run([&](CommandStream& s) { return heads.logits(s, k, th.view()); }, R);
    for (int64_t v = 0; v < V; ++v) {
      const float w = want[static_cast<size_t>(r * V + v)];
      EXPECT_NEAR(got[i * static_cast<size_t>(V) + static_cast<size_t>(v)], w, 1e-5f * (1 + std::abs(w)))
          << "pick " << i;
    }
  }
  CommandStream s(ctx());
  EXPECT_THROW((heads.logits_at(s, th.view(), {{H, 0}})), Error);
  EXPECT_THROW((heads.logits_at(s, th.view(), {{0, R}})), Error);
  EXPECT_THROW((heads.logits_at(s, th.view(), {})), Error);
}

TEST_F(decoding_hawk, NeedsHeads) {
  ModelSet m = testing::tiny_models(ctx()).set;
  m.heads = nullptr;
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.sampler = testing::tiny_settings();
  EXPECT_THROW(make_strategy("hawk", m, in), Error);
  for (const MethodOptions& bad : std::vector<MethodOptions>{
           {{"depth", "5"}}, {{"tree", "star"}}, {{"directions", "diagonal"}}, {{"nodes", "0"}}, {{"nodes", "121"}}}) {
    in.options = bad;
    EXPECT_THROW(make_strategy("hawk", testing::tiny_models(ctx()).set, in), Error) << bad.begin()->first;
  }
}

}  // namespace
}  // namespace vkspec
