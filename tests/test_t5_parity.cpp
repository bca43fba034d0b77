// The T5 v1.1 encoder on the engine (engine/model/t5_encoder.h) against our PyTorch reference
// written from Hugging Face's T5 (tools/t5_model.py, tools/reference.py t5-encode, in float64):
// random tiny encoders in the released folder layout, converted by tools/convert_t5.py; the last
// hidden state of every position, padded ones included, for prompts with and without padding and
// one long enough that the relative position buckets reach their logarithmic range; f32 weights
// (NMSE 1e-9) and the default f16 ones (1e-5). The bucket function against torch's values.
#include <iostream>

#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/model/t5_encoder.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

// Hugging Face's bucket (float32 log) at 32 buckets, max distance 128, computed with torch.
TEST(T5RelativeBucket, MatchesTorch) {
  const std::vector<std::pair<int64_t, int64_t>> known = {
      {0, 0},   {1, 17},  {-1, 1},  {7, 23},  {-8, 8},  {15, 25},  {16, 26},  {-16, 10},  {17, 26},  {31, 27},
      {32, 28}, {33, 28}, {63, 29}, {64, 30}, {65, 30}, {127, 31}, {128, 31}, {-128, 15}, {200, 31}, {-500, 15}};
  for (const auto& [rel, bucket] : known) EXPECT_EQ(t5_relative_bucket(rel, 32, 128), bucket) << rel;
  int64_t checksum = 0;  // sum of bucket x (index + 1) over -600 .. 600, from the same torch code
  for (int64_t rel = -600; rel <= 600; ++rel) checksum += t5_relative_bucket(rel, 32, 128) * (rel + 601);
  EXPECT_EQ(checksum, 19105790);
}

struct T5Case {
  const char* name;
  int d_model, layers, heads, d_kv, d_ff, vocab, shards;
  const char* dtype;  // of the checkpoint
  bool f16;           // the engine's f16 weights
};

void PrintTo(const T5Case& c, std::ostream* os) { *os << c.name; }

class T5ParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<T5Case> {};

TEST_P(T5ParityTest, HiddenStatesMatchPyTorchReference) {
  const T5Case c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("t5_parity_") + c.name);
  auto r = testing::run_reference({"make-t5", dir + "/hf", "--d-model", std::to_string(c.d_model), "--layers",
                                   std::to_string(c.layers), "--heads", std::to_string(c.heads), "--d-kv",
                                   std::to_string(c.d_kv), "--d-ff", std::to_string(c.d_ff), "--vocab",
                                   std::to_string(c.vocab), "--shards", std::to_string(c.shards), "--dtype", c.dtype});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  r = testing::run_tool("convert_t5.py", {dir + "/hf", dir + "/t5", "--dtype", "f32"});
  ASSERT_TRUE(r.ok) << r.message;
  T5Encoder enc(ctx(), dir + "/t5.safetensors", c.f16 ? DType::F16 : DType::F32);
  EXPECT_EQ(enc.config().n_layer, c.layers);
  // A prompt padded to 16 (LlamaGen pads to 120), one filling its length, one of 80 tokens whose
  // distances reach the logarithmic buckets (16, 32 and 64 sit on their boundaries).
  for (const auto& [n, length] : std::vector<std::pair<int, int>>{{5, 16}, {9, 9}, {71, 80}}) {
    std::vector<int32_t> ids;
    std::vector<uint8_t> mask;
    for (int i = 0; i < length; ++i) {
      ids.push_back(i < n ? (i * 37 + 5) % c.vocab : 0);
      mask.push_back(i < n ? 1 : 0);
    }
    const std::vector<int32_t> given(ids.begin(), ids.begin() + n);
    const std::string out = dir + "/hidden.safetensors";
    r = testing::run_reference({"t5-encode", dir + "/hf", "--ids", testing::comma_list(given), "--length",
                                std::to_string(length), "--out", out});
    ASSERT_TRUE(r.ok) << r.message;
    const std::vector<float> want = SafetensorsFile(out).read_f32("hidden");
    const std::vector<float> got = enc.encode(ids, mask);
    ASSERT_EQ(got.size(), want.size());
    const double e = normalised_error(got, want), nmse = e * e;
    std::cout << c.name << " " << n << " of " << length << " tokens: NMSE " << nmse << "\n";
    EXPECT_LE(nmse, c.f16 ? 1e-5 : 1e-9) << n << " of " << length;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, T5ParityTest,
                         ::testing::Values(T5Case{"d64_l2_h4_f32", 64, 2, 4, 16, 96, 128, 1, "f32", false},
                                           T5Case{"d48_l3_h3_sharded_bf16", 48, 3, 3, 20, 80, 200, 2, "bf16", false},
                                           T5Case{"d64_l2_h4_f16_engine", 64, 2, 4, 16, 96, 128, 1, "f32", true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vkspec
