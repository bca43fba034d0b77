// vvs on the device (decoding/eagle_skip.cpp): skipped rounds come where the schedule puts them,
// run no target forward and commit a path of their own tree; the next forward writes the skipped
// chain's KV, which greedy decoding shows: every token a verified round commits is the target's
// greedy token given the whole prefix, skipped tokens included (teacher-forced forward of the
// final image). The dynamic schedule skips every eligible round at threshold -1, none at 1
// (no two different paths reach it; then vvs is eagle, or lantern with the relaxed rule, token
// for token), and needs a tokenizer.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "engine/model/condition.h"
#include "engine/model/tokenizer.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;

constexpr int64_t kGrid = 6, kTokens = kGrid * kGrid;

// The tiny models with the shipped tokenizer's codebook (the dynamic schedule's), built once; a
// function's static, so it goes before the Vulkan context it was made on.
struct VvsModels {
  testing::TinyModels tiny;
  std::unique_ptr<Tokenizer> tokenizer;
};

class decoding_vvs : public testing::VulkanTest {
 protected:
  testing::TinyModels& models() {
    static VvsModels m = [&] {
      testing::TinyGptSpec t;
      t.grid = kGrid;
      t.embed_scale = 1.0f;
      VvsModels r{testing::build_tiny_models(ctx(), testing::scratch_dir("vvs_models"), t), nullptr};
      r.tokenizer =
          load_tokenizer(ctx(), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors", DType::F32, 1, kGrid);
      r.tiny.set.tokenizer = r.tokenizer.get();
      return r;
    }();
    return m.tiny;
  }
  // The CFG-mixed logits' argmax at every position of `grid`, teacher-forced (class `label`).
  std::vector<int32_t> greedy_given(const std::vector<int32_t>& grid, int64_t label, float cfg);
};

std::vector<int32_t> decoding_vvs::greedy_given(const std::vector<int32_t>& grid, int64_t label, float cfg) {
  GptOptions opt;
  opt.weights = DType::F32;
  opt.kv = DType::F32;
  opt.batch_rows = 2;
  opt.max_queries = kTokens;
  Gpt gpt(ctx(), models().dir + "/target.safetensors", opt);
  const ClassLabel cls(label);
  const std::vector<const Condition*> rows = guided_rows(cls, 2);
  std::vector<uint32_t> tokens(grid.begin(), grid.end() - 1);  // the query at the class predicts token 0
  KvCache cache = gpt.make_cache();
  GptBatch batch(ctx(), gpt.config(), GptQueries::causal(gpt.config(), 0, kTokens, tokens, rows, cache.slots()), 2,
                 cache.slots());
  CommandStream s(ctx());
  const GptOutputs out = gpt.forward(s, batch, cache);
  Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "logits copy");
  s.copy(out.logits, logits);
  s.submit_and_wait();
  std::vector<float> l(static_cast<size_t>(logits.numel()));
  ctx().download(logits, l.data(), l.size() * 4);
  const int64_t V = testing::kTinyVocab;
  std::vector<int32_t> best(static_cast<size_t>(kTokens));
  for (int64_t p = 0; p < kTokens; ++p) {
    const float* c = l.data() + p * V;              // the conditional row
    const float* u = l.data() + (kTokens + p) * V;  // the null row
    int32_t arg = 0;
    for (int64_t x = 1; x < V; ++x)
      if (u[x] + cfg * (c[x] - u[x]) > u[arg] + cfg * (c[arg] - u[arg])) arg = static_cast<int32_t>(x);
    best[static_cast<size_t>(p)] = arg;
  }
  return best;
}

TEST_F(decoding_vvs, SkippedRoundsFollowTheScheduleAndCommitTheirTree) {
  const testing::Sample s =
      run_images(ctx(), by_name("vvs"), {{"interval", "2"}, {"depth", "3"}, {"topk", "3"}, {"nodes", "8"}}, 70, 4, true,
                 &models().set);
  int skipped = 0;
  for (const std::vector<StepEvent>& events : s.events) {
    int64_t before = 0;
    for (const StepEvent& e : events) {
      const bool expect_skip = e.step >= 1 && before >= 6 && (e.step - 1) % 2 == 1;
      EXPECT_EQ(!e.verified, expect_skip) << "step " << e.step << " from " << before;
      if (!e.verified) {
        ++skipped;
        EXPECT_GE(e.committed - before, 1);
        for (int32_t p : e.accepted) {  // each committed token was drafted at its position
          bool drafted = false;
          for (size_t i = 0; i < e.proposed.size(); ++i)
            drafted |= e.proposed[i] == p && e.proposed_tokens[i] == e.grid[static_cast<size_t>(p)];
          EXPECT_TRUE(drafted) << "position " << p << " at step " << e.step;
        }
      }
      before = e.committed;
    }
  }
  EXPECT_GT(skipped, 4);
}

TEST_F(decoding_vvs, VerifiedTokensSeeTheSkippedChain) {
  SamplerSettings greedy = testing::tiny_settings();
  greedy.top_k = 1;
  greedy.top_p = 1.0f;
  const testing::Sample s =
      run_images(ctx(), by_name("vvs", greedy),
                 {{"accept", "exact"}, {"interval", "2"}, {"depth", "3"}, {"topk", "3"}, {"nodes", "8"}}, 80, 6, true,
                 &models().set);
  int after_skip = 0;
  for (size_t i = 0; i < s.grids.size(); ++i) {
    const std::vector<int32_t> best = greedy_given(s.grids[i], static_cast<int64_t>(i % 2), greedy.cfg);
    bool skipped_before = false;
    for (const StepEvent& e : s.events[i]) {
      if (!e.verified) {
        skipped_before = true;
        continue;
      }
      for (const auto* list : {&e.accepted, &e.resampled})
        for (int32_t p : *list) {
          EXPECT_EQ(s.grids[i][static_cast<size_t>(p)], best[static_cast<size_t>(p)])
              << "image " << i << " position " << p << " step " << e.step;
          after_skip += skipped_before;
        }
      skipped_before = false;
    }
  }
  EXPECT_GT(after_skip, 5) << "no verified token came right after a skip";
}

// A dynamic schedule that never skips verifies the tree it grew to judge (cut on the host first):
// that is eagle's round, and LANTERN's with the relaxed rule, token for token.
TEST_F(decoding_vvs, NeverSkippingIsEagleOrLantern) {
  const MethodOptions tree = {{"depth", "3"}, {"topk", "3"}, {"nodes", "8"}};
  MethodOptions never = tree;
  never.insert({{"schedule", "dynamic"}, {"threshold", "1"}});
  MethodOptions exact = never, lantern = tree, relaxed = never;
  exact["accept"] = "exact";
  lantern.insert({{"drafter", "eagle"}, {"k", "3"}, {"delta", "0.3"}});
  relaxed.insert({{"k", "3"}, {"delta", "0.3"}});
  const testing::Sample a = run_images(ctx(), by_name("eagle"), tree, 95, 3, false, &models().set);
  const testing::Sample b = run_images(ctx(), by_name("vvs"), exact, 95, 3, false, &models().set);
  EXPECT_EQ(a.grids, b.grids);
  EXPECT_EQ(a.nfe_per_image, b.nfe_per_image);
  const testing::Sample c = run_images(ctx(), by_name("lantern"), lantern, 95, 3, false, &models().set);
  const testing::Sample d = run_images(ctx(), by_name("vvs"), relaxed, 95, 3, false, &models().set);
  EXPECT_EQ(c.grids, d.grids);
  EXPECT_EQ(c.nfe_per_image, d.nfe_per_image);
}

TEST_F(decoding_vvs, DynamicScheduleSkipsAlikePaths) {
  const MethodOptions tree = {{"schedule", "dynamic"}, {"depth", "3"}, {"topk", "3"}, {"nodes", "8"}};
  MethodOptions always = tree, never = tree;
  always["threshold"] = "-1";
  never["threshold"] = "1";
  const testing::Sample a = run_images(ctx(), by_name("vvs"), always, 90, 3, true, &models().set);
  const testing::Sample b = run_images(ctx(), by_name("vvs"), never, 90, 3, true, &models().set);
  for (const std::vector<StepEvent>& events : a.events) {
    bool last_skipped = false;
    int64_t before = 0;
    for (const StepEvent& e : events) {
      // Every eligible round skips (one with a drafted path), never two in a row.
      const bool eligible = e.step >= 1 && before >= 6 && !last_skipped;
      EXPECT_EQ(!e.verified, eligible) << "step " << e.step;
      last_skipped = !e.verified;
      before = e.committed;
    }
  }
  for (const std::vector<StepEvent>& events : b.events)
    for (const StepEvent& e : events) EXPECT_TRUE(e.verified) << "step " << e.step;
  EXPECT_LT(a.nfe_per_image, b.nfe_per_image);
  ModelSet without = models().set;
  without.tokenizer = nullptr;
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.sampler = testing::tiny_settings();
  in.options = tree;
  try {
    make_strategy("vvs", without, in);
    FAIL() << "the dynamic schedule ran without a codebook";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("codebook"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkspec
