// SSD beyond the lossless statistics (test_decoding_lossless.cpp): the latent heads compute what
// their contract says (tools/vkspec_models.py LatentHeads), and the strategy follows the paper's
// schedule on the tiny 3x3 grid: an ar step, then a block of the row's rest and the rows below,
// refined in rounds, with the heads run once per block.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "engine/checks/op_check.h"
#include "engine/model/latent_heads.h"
#include "engine/model/safetensors.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class decoding_ssd : public testing::VulkanTest {};

TEST_F(decoding_ssd, LatentHeadsFollowTheContract) {
  const testing::TinyModels& m = testing::tiny_models(ctx());
  LatentHeads& heads = *m.latent_heads;
  const int64_t D = m.target->config().dim, V = m.target->config().vocab_size, R = 3;
  std::vector<float> h(static_cast<size_t>(R * D));
  testing::TinyNormal rng(9);
  for (float& x : h) x = rng.next();
  Tensor in = upload_floats(ctx(), h, DType::F32, {R, D}, "states");
  SafetensorsFile target(m.target->path()), file(heads.path());
  const std::vector<float> out_w = target.read_f32("output.weight");
  for (const char* axis : {"h", "v"}) {
    Tensor out = ctx().tensor(DType::F32, {R, D}, "predicted", MemoryUsage::Readback);
    Tensor logits = ctx().tensor(DType::F32, {R, V}, "logits", MemoryUsage::Readback);
    CommandStream s(ctx());
    heads.apply(s, axis[0] == 'h' ? LatentHeads::Axis::Horizontal : LatentHeads::Axis::Vertical, in.view(), out.view());
    heads.logits(s, out.view(), logits.view());
    s.submit_and_wait();
    const std::vector<float> got = download_floats(ctx(), out), got_logits = download_floats(ctx(), logits);
    const std::string p = std::string("latent_heads.") + axis + ".0.";
    const std::vector<float> w1 = file.read_f32(p + "fc1.weight"), b1 = file.read_f32(p + "fc1.bias"),
                             w2 = file.read_f32(p + "fc2.weight"), b2 = file.read_f32(p + "fc2.bias");
    const int64_t H = static_cast<int64_t>(b1.size());
    for (int64_t r = 0; r < R; ++r) {
      std::vector<double> a(static_cast<size_t>(H)), y(static_cast<size_t>(D));
      for (int64_t i = 0; i < H; ++i) {
        double z = b1[static_cast<size_t>(i)];
        for (int64_t j = 0; j < D; ++j)
          z += double(w1[static_cast<size_t>(i * D + j)]) * h[static_cast<size_t>(r * D + j)];
        a[static_cast<size_t>(i)] = z / (1.0 + std::exp(-z));
      }
      for (int64_t i = 0; i < D; ++i) {
        double z = b2[static_cast<size_t>(i)];
        for (int64_t j = 0; j < H; ++j) z += double(w2[static_cast<size_t>(i * H + j)]) * a[static_cast<size_t>(j)];
        y[static_cast<size_t>(i)] = h[static_cast<size_t>(r * D + i)] + z;
        EXPECT_NEAR(got[static_cast<size_t>(r * D + i)], y[static_cast<size_t>(i)],
                    1e-4 * (1 + std::abs(y[static_cast<size_t>(i)])))
            << axis << " row " << r;
      }
      for (int64_t v = 0; v < V; ++v) {
        double l = 0;
        for (int64_t i = 0; i < D; ++i) l += double(out_w[static_cast<size_t>(v * D + i)]) * y[static_cast<size_t>(i)];
        EXPECT_NEAR(got_logits[static_cast<size_t>(r * V + v)], l, 1e-4 * (1 + std::abs(l))) << axis << " row " << r;
      }
    }
  }
}

TEST_F(decoding_ssd, LatentHeadsRejectAnotherContract) {
  const testing::TinyModels& m = testing::tiny_models(ctx());
  // Draft heads are not latent heads: the file's kind says so.
  EXPECT_THROW(LatentHeads(ctx(), m.dir + "/heads.safetensors", *m.target), Error);
  EXPECT_THROW(LatentHeads(ctx(), m.dir + "/missing.safetensors", *m.target), Error);
}

std::vector<int32_t> range(int32_t first, int32_t end) {
  std::vector<int32_t> v(static_cast<size_t>(end - first));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// On the 3x3 grid: step 0 has nothing to draft from (one query); step 1 starts a block at
// position 1: the row's rest (2 positions, horizontally) and one row below, verified with the
// row after it: queries 1..6.
TEST_F(decoding_ssd, BlocksFollowThePapersSchedule) {
  const testing::Sample s = testing::run_images(ctx(), testing::by_name("ssd"), {}, 11, 20, true);
  for (const auto& events : s.events) {
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events[0].proposed, std::vector<int32_t>{0});
    EXPECT_EQ(events[1].proposed, range(1, 7));
    EXPECT_EQ(events[1].head_forwards, 1);
  }
  const testing::Sample flat = testing::run_images(ctx(), testing::by_name("ssd"), {{"block-rows", "0"}}, 11, 20, true);
  for (const auto& events : flat.events) EXPECT_EQ(events[1].proposed, range(1, 4));
  EXPECT_LT(s.nfe_per_image, flat.nfe_per_image);
}

// With one round every step after the first drafts a new block; with more, a block's rest is
// refined by the target's samples first, so the heads run on fewer steps.
TEST_F(decoding_ssd, RoundsDecideWhenTheHeadsRedraft) {
  int64_t steps1 = 0, heads1 = 0, steps4 = 0, heads4 = 0;
  for (const auto& events :
       testing::run_images(ctx(), testing::by_name("ssd"), {{"rounds", "1"}}, 31, 30, true).events) {
    steps1 += static_cast<int64_t>(events.size());
    heads1 += events.back().head_forwards;
    EXPECT_EQ(events.back().head_forwards, static_cast<int64_t>(events.size()) - 1);
  }
  for (const auto& events :
       testing::run_images(ctx(), testing::by_name("ssd"), {{"rounds", "4"}}, 31, 30, true).events) {
    steps4 += static_cast<int64_t>(events.size());
    heads4 += events.back().head_forwards;
  }
  EXPECT_LT(heads4, steps4 - 30);
  EXPECT_GT(heads1, 0);
  EXPECT_GT(steps1, 0);
}

}  // namespace
}  // namespace vkspec
