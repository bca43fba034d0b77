// Generated GPTs built in memory (engine/model/synthetic_gpt.h) load exactly like the same bytes
// from a file, the forward bench times them, and every dispatch is counted (per stream and in
// the context's totals).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/checks/gpt_bench.h"
#include "engine/checks/op_check.h"
#include "engine/model/gpt.h"
#include "engine/model/synthetic_gpt.h"
#include "engine/ops/elementwise.h"
#include "common/error.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::VulkanTest;

GptShape tiny_shape() {
  GptShape s;
  s.dim = 32;
  s.n_layer = 2;
  s.n_head = 2;
  s.vocab_size = 40;
  s.num_classes = 3;
  s.grid_size = 4;
  s.ffn_hidden = GptConfig::llamagen_ffn_hidden(s.dim);
  return s;
}

std::vector<float> logits_of(Context& ctx, Gpt& gpt) {
  const GptConfig& cfg = gpt.config();
  KvCache cache = gpt.make_cache();
  const std::vector<uint32_t> tokens = {3, 1, 4};
  const ClassLabel one(1);
  GptBatch batch(ctx, cfg, GptQueries::causal(cfg, 0, 4, tokens, {&one, nullptr}, cache.slots()), 2, cache.slots());
  CommandStream s(ctx);
  const GptOutputs out = gpt.forward(s, batch, cache);
  Tensor host = ctx.tensor(DType::F32, out.logits.shape, "logits", MemoryUsage::Readback);
  s.copy(out.logits, host);
  s.submit_and_wait();
  return download_floats(ctx, host);
}

TEST(SyntheticGpt, LlamaGenShapesMatchTheirPaper) {
  const GptShape b = llamagen_shape("B", 16), l = llamagen_shape("L", 24), xl = llamagen_shape("XL", 16);
  EXPECT_EQ((std::vector<int64_t>{b.dim, b.n_layer, b.n_head, b.ffn_hidden}),
            (std::vector<int64_t>{768, 12, 12, 2048}));
  EXPECT_EQ((std::vector<int64_t>{l.dim, l.n_layer, l.n_head, l.ffn_hidden, l.grid_size}),
            (std::vector<int64_t>{1024, 24, 16, 2816, 24}));
  EXPECT_EQ((std::vector<int64_t>{xl.dim, xl.n_layer, xl.n_head, xl.ffn_hidden}),
            (std::vector<int64_t>{1280, 36, 20, 3584}));
  EXPECT_EQ(b.vocab_size, 16384);
  EXPECT_EQ(b.num_classes, 1000);
  EXPECT_THROW(llamagen_shape("XXXL", 16), Error);
}

TEST(SyntheticGpt, WeightsAreDeterministicAndScaledLikeLlamaGen) {
  SafetensorsFile a("a", synthetic_gpt(tiny_shape(), llamagen_init_fill(7)).take_bytes());
  SafetensorsFile b("b", synthetic_gpt(tiny_shape(), llamagen_init_fill(7)).take_bytes());
  SafetensorsFile c("c", synthetic_gpt(tiny_shape(), llamagen_init_fill(8)).take_bytes());
  const auto wa = a.read_f32("layers.1.feed_forward.w2.weight");
  EXPECT_EQ(wa, b.read_f32("layers.1.feed_forward.w2.weight"));
  EXPECT_NE(wa, c.read_f32("layers.1.feed_forward.w2.weight"));
  double sq = 0;
  for (float x : wa) sq += static_cast<double>(x) * x;
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(wa.size())), 0.02, 0.002);
  EXPECT_EQ(a.info("output.weight").dtype, StDType::F16);
  EXPECT_EQ(a.read_f32("norm.weight"), std::vector<float>(32, 1.0f));
  EXPECT_EQ(GptConfig::from_file(a).ffn_hidden, 256);
}

TEST_F(VulkanTest, GptFromMemoryEqualsTheSameBytesFromAFile) {
  SafetensorsWriter w = synthetic_gpt(tiny_shape(), llamagen_init_fill(3));
  const std::string path = testing::scratch_dir("synthetic_gpt") + "/tiny.safetensors";
  w.write(path);
  GptOptions opt;
  opt.max_queries = 4;
  Gpt from_file(ctx(), path, opt);
  Gpt from_memory(ctx(), SafetensorsFile("tiny in memory", w.take_bytes()), opt);
  EXPECT_EQ(from_memory.path(), "tiny in memory");
  EXPECT_EQ(from_memory.weight_bytes(), from_file.weight_bytes());
  EXPECT_EQ(logits_of(ctx(), from_memory), logits_of(ctx(), from_file));
}

TEST_F(VulkanTest, StreamsAndTheContextCountDispatches) {
  Tensor x = upload_floats(ctx(), {1, 2, 3}, DType::F32, {3}, "x");
  Tensor y = ctx().tensor(DType::F32, {3}, "y");
  const WorkCounters before = ctx().counters();
  CommandStream s(ctx());
  ops::add(s, x, x, x);
  ops::add(s, x, x, x);
  s.copy(x, y);  // transfers, not dispatches
  s.fill(y, 0);
  EXPECT_EQ(s.dispatch_count(), 2u);
  EXPECT_EQ(s.command_count(), 4u);
  s.submit_and_wait();
  EXPECT_EQ(s.dispatch_count(), 2u);  // the last batch's, until recording starts again
  const WorkCounters d = ctx().counters() - before;
  EXPECT_EQ(d.dispatches, 2u);
  EXPECT_EQ(d.transfers, 2u);
  EXPECT_EQ(d.submits, 1u);
  EXPECT_EQ(d.barriers, s.barrier_count());
}

TEST_F(VulkanTest, ForwardBenchTimesArStepsAndWindows) {
  GptOptions opt;
  opt.max_queries = 4;
  Gpt gpt(ctx(), SafetensorsFile("tiny", synthetic_gpt(tiny_shape(), llamagen_init_fill(1)).take_bytes()), opt);
  GptBench bench(ctx(), gpt);
  const int64_t first = 1 + 8;  // half of the 4x4 image in the cache
  const WorkCounters before = ctx().counters();
  const ForwardTiming ar = bench.time(first, 1, 2);
  const ForwardTiming w4 = bench.time(first, 4, 1);
  EXPECT_EQ(ar.kv_len, first + 1);
  EXPECT_EQ(w4.kv_len, first + 4);
  EXPECT_GT(ar.forward_dispatches, 2u * 6u);  // six per layer: a block with its norms and adds folded
  EXPECT_GT(ar.sampler_dispatches, 0u);
  EXPECT_GT(ar.ms(), 0.0);
  EXPECT_GT(w4.wall_ms, 0.0);
  // Three submits for the AR step (one untimed), two for the window.
  const WorkCounters d = ctx().counters() - before;
  EXPECT_EQ(d.dispatches, 3u * (ar.forward_dispatches + ar.sampler_dispatches) +
                              2u * (w4.forward_dispatches + w4.sampler_dispatches));
  EXPECT_THROW(bench.time(first, 5, 1), Error);   // over max_queries
  EXPECT_THROW(bench.time(1 + 14, 4, 1), Error);  // past the end of the sequence
}

}  // namespace
}  // namespace vkspec
