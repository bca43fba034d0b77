// Janus-Pro's image-generation path on the engine against our PyTorch reference written from the
// released code (tools/janus_model.py, tools/reference.py): random tiny Janus checkpoint folders in
// the released Hugging Face layout, converted by tools/convert_janus.py, a prompt through the
// converted tokenizer.json and the SFT template. Checked: the prompt's ids and their
// unconditional row, logits of both CFG rows at every image position (one prefill, and one query
// per forward through the KV cache), and greedy decoding with CFG 5 through the `ar` method (top-k
// 1), equal to the reference's tokens except at a near-tie, whose top-2 gap is reported; with f32
// weights and cache (NMSE 1e-5) and with the engine's default f16 ones (1e-4).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decoding/generation.h"
#include "engine/checks/op_check.h"
#include "engine/model/condition.h"
#include "engine/model/gpt.h"
#include "tests/support/greedy_parity.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

struct JanusCase {
  const char* name;
  int dim, layers, heads, ffn, image_vocab, grid, head_hidden, shards;
  const char* dtype;  // of the checkpoint; converted to f32
  bool f16 = false;   // the engine's default f16 weights and KV cache (else f32)
};

void PrintTo(const JanusCase& c, std::ostream* os) { *os << c.name; }

class JanusParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<JanusCase> {
 protected:
  // The converted model's path, or "" when the reference is unavailable (skip).
  std::string convert(const std::string& dir, std::string* message) {
    const JanusCase c = GetParam();
    auto r = testing::run_reference({"make-janus",    dir + "/hf",
                                     "--dim",         std::to_string(c.dim),
                                     "--layers",      std::to_string(c.layers),
                                     "--heads",       std::to_string(c.heads),
                                     "--ffn",         std::to_string(c.ffn),
                                     "--image-vocab", std::to_string(c.image_vocab),
                                     "--grid",        std::to_string(c.grid),
                                     "--head-hidden", std::to_string(c.head_hidden),
                                     "--shards",      std::to_string(c.shards),
                                     "--dtype",       c.dtype});
    if (r.skipped) {
      *message = r.message;
      return "";
    }
    EXPECT_TRUE(r.ok) << r.message;
    r = testing::run_tool("convert_janus.py", {dir + "/hf", dir + "/model", "--dtype", "f32", "--prompt-tokens", "24"});
    EXPECT_TRUE(r.ok) << r.message;
    return dir + "/model.safetensors";
  }
};

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  const double e = normalised_error(got, want);
  return e * e;
}

// The engine's logits of both rows at the queries predicting image tokens 0 .. n, as the
// reference's rows L - 1 .. L + n - 1 of [2, L + n, V].
std::vector<float> image_rows(const std::vector<float>& all, int64_t rows_per_b, int64_t first, int64_t n, int64_t V) {
  std::vector<float> out;
  for (int64_t b = 0; b < 2; ++b)
    out.insert(out.end(), all.begin() + (b * rows_per_b + first) * V, all.begin() + (b * rows_per_b + first + n) * V);
  return out;
}

TEST_P(JanusParityTest, LogitsAndGreedyTokensMatchPyTorchReference) {
  const JanusCase c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("janus_parity_") + c.name);
  std::string skip;
  const std::string model = convert(dir, &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_FALSE(HasFailure());
  GptOptions opt;
  opt.weights = c.f16 ? DType::F16 : DType::F32;
  opt.kv = c.f16 ? DType::F16 : DType::F32;
  opt.max_queries = 64;
  const double tolerance = c.f16 ? 1e-4 : 1e-5;  // NMSE of the logits
  Gpt gpt(ctx(), model, opt);
  const GptConfig& cfg = gpt.config();
  ASSERT_EQ(cfg.family, "janus-pro");
  const auto cond = gpt.prompt_condition("a red ankle boot");
  const auto* prompt = dynamic_cast<const CaptionEmbeddings*>(cond.get());
  ASSERT_NE(prompt, nullptr);
  const std::vector<int32_t>& ids = prompt->prompt_ids();
  const int64_t L = static_cast<int64_t>(ids.size()), P = cfg.cls_token_num, V = cfg.vocab_size;
  const int64_t n = cfg.image_tokens() - 1;  // every image token but the last is fed
  ASSERT_LE(L, P);
  std::vector<uint32_t> tokens;
  std::vector<int32_t> fed;
  for (int64_t i = 0; i < n; ++i) {
    tokens.push_back(static_cast<uint32_t>((i * 5 + 2) % V));
    fed.push_back(static_cast<int32_t>(tokens.back()));
  }
  const std::string ref = dir + "/logits.safetensors";
  auto r = testing::run_reference({"janus-logits", dir + "/hf", "--ids", testing::comma_list(ids), "--tokens",
                                   testing::comma_list(fed), "--out", ref});
  ASSERT_TRUE(r.ok) << r.message;
  const std::vector<float> want = image_rows(SafetensorsFile(ref).read_f32("logits"), L + n, L - 1, n + 1, V);
  const std::vector<const Condition*> conditions = guided_rows(*cond, 2);
  ASSERT_NE(conditions[1], nullptr);  // the prompt's own unconditional row
  const int64_t T = P + n;

  {  // One prefill forward over the whole sequence.
    KvCache cache = gpt.make_cache();
    GptBatch batch(ctx(), cfg, GptQueries::causal(cfg, 0, T, tokens, conditions, cache.slots()), 2, cache.slots());
    CommandStream s(ctx());
    GptOutputs out = gpt.forward(s, batch, cache);
    Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "logits copy");
    s.copy(out.logits, logits);
    s.submit_and_wait();
    const std::vector<float> got = image_rows(download_floats(ctx(), logits), T, P - 1, n + 1, V);
    std::cout << c.name << " prefill: NMSE " << nmse(got, want) << "\n";
    EXPECT_LE(nmse(got, want), tolerance);
  }
  {  // One query per forward through the KV cache, condition positions too.
    KvCache cache = gpt.make_cache();
    std::vector<float> all(static_cast<size_t>(2 * T * V));
    CommandStream s(ctx());
    for (int64_t p = 0; p < T; ++p) {
      std::vector<uint32_t> one;
      if (p >= P) one.push_back(tokens[static_cast<size_t>(p - P)]);
      GptBatch batch(ctx(), cfg, GptQueries::causal(cfg, p, 1, one, conditions, cache.slots()), 2, cache.slots());
      GptOutputs out = gpt.forward(s, batch, cache);
      Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "step logits");
      s.copy(out.logits, logits);
      s.submit_and_wait();
      const std::vector<float> step = download_floats(ctx(), logits);
      for (int64_t b = 0; b < 2; ++b)
        std::copy(step.begin() + b * V, step.begin() + (b + 1) * V, all.begin() + (b * T + p) * V);
    }
    const std::vector<float> got = image_rows(all, T, P - 1, n + 1, V);
    std::cout << c.name << " step by step: NMSE " << nmse(got, want) << "\n";
    EXPECT_LE(nmse(got, want), tolerance);
  }

  // Greedy with CFG 5 through the ar method against the reference's greedy loop.
  const std::string greedy = dir + "/greedy.json";
  r = testing::run_reference({"janus-greedy", dir + "/hf", "--ids", testing::comma_list(ids), "--cfg", "5", "--out",
                              greedy});
  ASSERT_TRUE(r.ok) << r.message;
  ModelSet set;
  set.ctx = &ctx();
  set.target = &gpt;
  StrategyInputs in;
  in.condition = cond;
  in.sampler.cfg = 5.0f;
  in.sampler.top_k = 1;
  const Generation gen = generate_one("ar", set, in, false);
  testing::expect_greedy_tokens_match(c.name, gen.tokens, greedy);
}

INSTANTIATE_TEST_SUITE_P(Tiny, JanusParityTest,
                         ::testing::Values(JanusCase{"d64_l2_h4_g4_bf16", 64, 2, 4, 128, 64, 4, 64, 1, "bf16"},
                                           JanusCase{"d96_l3_h3_g6_f32_sharded", 96, 3, 3, 160, 128, 6, 80, 2, "f32"},
                                           JanusCase{"d64_l2_h4_g4_f16_engine", 64, 2, 4, 128, 64, 4, 64, 1, "bf16",
                                                     true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vkspec
