// The engine's GPT against our PyTorch LlamaGen reference (tools/reference.py) on small random
// models: logits at every position for both CFG rows, as one prefill and token by token through
// the KV cache. f32 weights and cache: NMSE <= 1e-5.
#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/model/gpt.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

struct ParityCase {
  const char* name;
  int dim, layers, heads, vocab, classes, grid;
};

// Test names print the case name, not the struct bytes.
void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.name; }

class GptParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<ParityCase> {};

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  const double e = normalised_error(got, want);
  return e * e;
}

TEST_P(GptParityTest, LogitsMatchPyTorchReference) {
  const ParityCase c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("gpt_parity_") + c.name);
  const std::string model = dir + "/model.safetensors", ref = dir + "/logits.safetensors";
  auto r =
      testing::run_reference({"make-gpt", model, "--dim", std::to_string(c.dim), "--layers", std::to_string(c.layers),
                              "--heads", std::to_string(c.heads), "--vocab", std::to_string(c.vocab), "--classes",
                              std::to_string(c.classes), "--grid", std::to_string(c.grid)});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  const int n = c.grid * c.grid - 1;  // every image token but the last is fed
  std::vector<uint32_t> tokens;
  std::string list;
  for (int i = 0; i < n; ++i) {
    tokens.push_back(static_cast<uint32_t>((i * 7 + 3) % c.vocab));
    list += (i ? "," : "") + std::to_string(tokens.back());
  }
  const uint32_t label = 1;
  r = testing::run_reference({"gpt-logits", model, "--label", std::to_string(label), "--tokens", list, "--out", ref});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile reference(ref);
  const std::vector<float> want = reference.read_f32("logits");  // [2, n + 1, vocab]
  const std::vector<float> want_hidden = reference.read_f32("hidden");

  GptOptions opt;
  opt.weights = DType::F32;
  opt.kv = DType::F32;
  opt.batch_rows = 2;
  opt.max_queries = n + 1;
  Gpt gpt(ctx(), model, opt);
  const ClassLabel cls(label);
  const std::vector<const Condition*> conditions = guided_rows(cls, 2);
  const int64_t V = c.vocab, T = n + 1;

  {  // One prefill forward over the whole sequence.
    KvCache cache = gpt.make_cache();
    GptBatch batch(ctx(), gpt.config(), GptQueries::causal(gpt.config(), 0, T, tokens, conditions, cache.slots()), 2,
                   cache.slots());
    CommandStream s(ctx());
    GptOutputs out = gpt.forward(s, batch, cache);
    Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "logits copy");
    Tensor hidden = ctx().tensor(DType::F32, out.hidden.shape, "hidden copy");
    s.copy(out.logits, logits);
    s.copy(out.hidden, hidden);
    s.submit_and_wait();
    EXPECT_LE(nmse(download_floats(ctx(), logits), want), 1e-5);
    EXPECT_LE(nmse(download_floats(ctx(), hidden), want_hidden), 1e-5);
  }
  {  // Token by token through the KV cache (the decode path of attention).
    KvCache cache = gpt.make_cache();
    std::vector<float> got(want.size());
    CommandStream s(ctx());
    for (int64_t p = 0; p < T; ++p) {
      std::vector<uint32_t> one;
      if (p > 0) one.push_back(tokens[static_cast<size_t>(p - 1)]);
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
    EXPECT_LE(nmse(got, want), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Small, GptParityTest,
                         ::testing::Values(ParityCase{"d128_l2_h2_g4", 128, 2, 2, 64, 5, 4},
                                           ParityCase{"d192_l3_h3_g5", 192, 3, 3, 100, 10, 5},
                                           ParityCase{"d64_l1_h2_g8", 64, 1, 2, 37, 3, 8}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vkspec
