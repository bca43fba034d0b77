// Hawk beyond the lossless statistics (test_decoding_lossless.cpp): the candidate tree really has
// alternates and they are accepted (so the multi-draft path is exercised), forwards drop below
// ar's, draft heads compute what the contract says (also for the picked rows hawk and ssd
// project), and the strategy needs its heads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/checks/op_check.h"
#include "engine/model/draft_heads.h"
#include "engine/model/safetensors.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class decoding_hawk : public testing::VulkanTest {};

TEST_F(decoding_hawk, AlternatesAreProposedAndAccepted) {
  const testing::Sample s = testing::run_images(ctx(), testing::by_name("hawk"), {}, 500, 150, true);
  int64_t alternates = 0, accepted_alternates = 0;
  for (const auto& events : s.events)
    for (const StepEvent& e : events) {
      for (size_t i = 0; i < e.proposed.size(); ++i) {
        const bool repeat = std::find(e.proposed.begin(), e.proposed.begin() + i, e.proposed[i]) != e.proposed.begin() + i;
        if (!repeat) continue;
        ++alternates;
        // An accepted position whose token is this later candidate's, not the first one's.
        const size_t first = std::find(e.proposed.begin(), e.proposed.end(), e.proposed[i]) - e.proposed.begin();
        const bool taken = std::find(e.accepted.begin(), e.accepted.end(), e.proposed[i]) != e.accepted.end() &&
                           e.grid[static_cast<size_t>(e.proposed[i])] == e.proposed_tokens[i] &&
                           e.proposed_tokens[first] != e.proposed_tokens[i];
        accepted_alternates += taken;
      }
    }
  EXPECT_GT(alternates, 0);
  EXPECT_GT(accepted_alternates, 0);
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
        for (int64_t j = 0; j < D; ++j) z += double(w[static_cast<size_t>(i * D + j)]) * h[static_cast<size_t>(r * D + j)];
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
      EXPECT_NEAR(got[i * static_cast<size_t>(V) + static_cast<size_t>(v)], w, 1e-5f * (1 + std::abs(w))) << "pick " << i;
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
  in.options = {{"depth", "5"}};
  EXPECT_THROW(make_strategy("hawk", testing::tiny_models(ctx()).set, in), Error);
}

}  // namespace
}  // namespace vkspec
