// LlamaGen's text-to-image GPT on the engine against our PyTorch reference (tools/reference.py):
// a small random checkpoint in LlamaGen's .pt layout, converted by tools/convert_llamagen.py, a
// caption in LlamaGen's T5 .npy layout (fewer tokens than condition positions, so padding is
// hidden by the attention mask), logits at every position for both CFG rows (caption, learned
// null caption), as one prefill and one query per forward through the KV cache. f32 weights and
// cache: NMSE <= 1e-5.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/model/condition.h"
#include "engine/model/gpt.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

struct T2iCase {
  const char* name;
  int dim, layers, heads, vocab, grid, cls, caption_dim, caption_tokens;
};

void PrintTo(const T2iCase& c, std::ostream* os) { *os << c.name; }

class GptT2iParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<T2iCase> {};

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  const double e = normalised_error(got, want);
  return e * e;
}

double max_abs_error(const std::vector<float>& got, const std::vector<float>& want) {
  double m = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) m = std::max(m, std::fabs(double(got[i]) - want[i]));
  return m;
}

TEST_P(GptT2iParityTest, LogitsMatchPyTorchReference) {
  const T2iCase c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("gpt_t2i_parity_") + c.name);
  const std::string ckpt = dir + "/model.pt", model = dir + "/model.safetensors";
  const std::string caption_path = dir + "/caption.npy", ref = dir + "/logits.safetensors";
  auto r = testing::run_reference({"make-t2i", ckpt, "--dim", std::to_string(c.dim), "--layers",
                                   std::to_string(c.layers), "--heads", std::to_string(c.heads), "--vocab",
                                   std::to_string(c.vocab), "--grid", std::to_string(c.grid), "--cls",
                                   std::to_string(c.cls), "--caption-dim", std::to_string(c.caption_dim)});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  r = testing::run_tool("convert_llamagen.py",
                        {ckpt, model, "--kind", "gpt", "--dtype", "f32", "--n-head", std::to_string(c.heads), "--grid",
                         std::to_string(c.grid), "--cls-token-num", std::to_string(c.cls)});
  ASSERT_TRUE(r.ok) << r.message;
  r = testing::run_reference({"make-caption", caption_path, "--tokens", std::to_string(c.caption_tokens), "--dim",
                              std::to_string(c.caption_dim)});
  ASSERT_TRUE(r.ok) << r.message;
  const int n = c.grid * c.grid - 1;  // every image token but the last is fed
  std::vector<uint32_t> tokens;
  std::string list;
  for (int i = 0; i < n; ++i) {
    tokens.push_back(static_cast<uint32_t>((i * 5 + 2) % c.vocab));
    list += (i ? "," : "") + std::to_string(tokens.back());
  }
  r = testing::run_reference({"t2i-logits", model, "--caption", caption_path, "--tokens", list, "--out", ref});
  ASSERT_TRUE(r.ok) << r.message;
  const std::vector<float> want = SafetensorsFile(ref).read_f32("logits");  // [2, cls + n, vocab]

  const CaptionEmbeddings caption = CaptionEmbeddings::load(caption_path);
  const std::vector<const Condition*> conditions = guided_rows(caption, 2);
  const int64_t V = c.vocab, T = c.cls + n;
  GptOptions opt;
  opt.weights = DType::F32;
  opt.kv = DType::F32;
  opt.batch_rows = 2;
  opt.max_queries = T;
  Gpt gpt(ctx(), model, opt);
  ASSERT_EQ(gpt.config().model_type, ModelType::t2i);
  ASSERT_EQ(gpt.config().cls_token_num, c.cls);

  {  // One prefill forward over the whole sequence.
    KvCache cache = gpt.make_cache();
    GptBatch batch(ctx(), gpt.config(), GptQueries::causal(gpt.config(), 0, T, tokens, conditions, cache.slots()), 2,
                   cache.slots());
    CommandStream s(ctx());
    GptOutputs out = gpt.forward(s, batch, cache);
    Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "logits copy");
    s.copy(out.logits, logits);
    s.submit_and_wait();
    const std::vector<float> got = download_floats(ctx(), logits);
    std::cout << c.name << " prefill: NMSE " << nmse(got, want) << ", max |error| " << max_abs_error(got, want) << "\n";
    EXPECT_LE(nmse(got, want), 1e-5);
  }
  {  // One query per forward through the KV cache: condition positions too.
    KvCache cache = gpt.make_cache();
    std::vector<float> got(want.size());
    CommandStream s(ctx());
    for (int64_t p = 0; p < T; ++p) {
      std::vector<uint32_t> one;
      if (p >= c.cls) one.push_back(tokens[static_cast<size_t>(p - c.cls)]);
      GptBatch batch(ctx(), gpt.config(), GptQueries::causal(gpt.config(), p, 1, one, conditions, cache.slots()), 2,
                     cache.slots());
      GptOutputs out = gpt.forward(s, batch, cache);
      Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "step logits");
      s.copy(out.logits, logits);
      s.submit_and_wait();
      const std::vector<float> step = download_floats(ctx(), logits);  // [2, V]
      for (int64_t b = 0; b < 2; ++b)
        std::copy(step.begin() + b * V, step.begin() + (b + 1) * V, got.begin() + (b * T + p) * V);
    }
    std::cout << c.name << " step by step: NMSE " << nmse(got, want) << ", max |error| " << max_abs_error(got, want)
              << "\n";
    EXPECT_LE(nmse(got, want), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Small, GptT2iParityTest,
                         ::testing::Values(T2iCase{"d64_l2_h2_g4_cls8", 64, 2, 2, 32, 4, 8, 16, 5},
                                           T2iCase{"d96_l2_h3_g4_cls120", 96, 2, 3, 40, 4, 120, 32, 17}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vkspec
