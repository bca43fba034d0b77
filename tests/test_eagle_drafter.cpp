// The engine's EAGLE drafter against PyTorch (tools/reference.py eagle-forward, the module
// tools/train_eagle_drafter.py trains) on a small random target and drafter: predicted features and
// draft logits of every element for both CFG rows, in one forward and split across two forwards
// through the drafter's KV cache (the way chain drafting feeds it); and the files it refuses.
#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/model/eagle_drafter.h"
#include "engine/model/safetensors_writer.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class eagle_drafter : public testing::VulkanTest {};

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  const double e = normalised_error(got, want);
  return e * e;
}

struct Outputs {
  std::vector<float> hidden, logits;  // [B, T, dim], [B, T, vocab]
};

// Runs elements [0, T) in forwards of `split` elements (the rest in one), f32 weights and cache.
Outputs run_engine(Context& ctx, const std::string& gpt_path, const std::string& drafter_path,
                   const std::vector<uint32_t>& tokens, const std::vector<float>& features, int64_t split, int layers) {
  GptOptions opt;
  opt.weights = DType::F32;
  opt.kv = DType::F32;
  opt.batch_rows = 2;
  opt.max_queries = static_cast<int64_t>(tokens.size());
  Gpt gpt(ctx, gpt_path, opt);
  EagleDrafter d(ctx, drafter_path, gpt, opt.max_queries);
  EXPECT_EQ(d.config().n_layer, layers);
  const int64_t T = static_cast<int64_t>(tokens.size()), D = gpt.config().dim, V = gpt.config().vocab_size;
  const int64_t cls = gpt.config().cls_token_num;
  KvCache cache = d.make_cache(2);
  const ClassLabel label(1);
  const std::vector<const Condition*> conditions = guided_rows(label, 2);
  Outputs r{std::vector<float>(static_cast<size_t>(2 * T * D)), std::vector<float>(static_cast<size_t>(2 * T * V))};
  for (int64_t first = 0; first < T;) {
    const int64_t n = first == 0 ? std::min(split, T) : T - first;
    std::vector<int64_t> positions;
    for (int64_t j = first; j < first + n; ++j) positions.push_back(d.element_position(j));
    const std::vector<uint32_t> fed(tokens.begin() + first, tokens.begin() + first + n);
    GptBatch batch(ctx, d.config(),
                   GptQueries::at_positions(d.config(), positions, fed, conditions, cache.slots(),
                                            [&](int64_t, int64_t s) { return s >= cls; }),
                   2, cache.slots());
    std::vector<float> f(static_cast<size_t>(2 * n * D));
    for (int64_t b = 0; b < 2; ++b) std::copy_n(features.begin() + (b * T + first) * D, n * D, f.begin() + b * n * D);
    Tensor ft = upload_floats(ctx, f, DType::F32, {2 * n, D}, "features");
    CommandStream s(ctx);
    const GptOutputs out = d.forward(s, batch, ft.view(), cache);
    Tensor h = ctx.tensor(DType::F32, out.hidden.shape, "g copy"),
           l = ctx.tensor(DType::F32, out.logits.shape, "logits copy");
    s.copy(out.hidden, h);
    s.copy(out.logits, l);
    s.submit_and_wait();
    const std::vector<float> gh = download_floats(ctx, h), gl = download_floats(ctx, l);
    for (int64_t b = 0; b < 2; ++b) {
      std::copy_n(gh.begin() + b * n * D, n * D, r.hidden.begin() + (b * T + first) * D);
      std::copy_n(gl.begin() + b * n * V, n * V, r.logits.begin() + (b * T + first) * V);
    }
    first += n;
  }
  return r;
}

void check_parity(Context& ctx, int layers) {
  const std::string dir = testing::scratch_dir("eagle_drafter_l" + std::to_string(layers));
  const std::string gpt = dir + "/gpt.safetensors", drafter = dir + "/eagle.safetensors";
  const std::string feats = dir + "/features.safetensors", ref = dir + "/out.safetensors";
  auto r = testing::run_reference({"make-gpt", gpt, "--dim", "64", "--layers", "1", "--heads", "2", "--vocab", "37",
                                   "--classes", "3", "--grid", "4"});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  r = testing::run_reference({"make-eagle", drafter, "--gpt", gpt, "--layers", std::to_string(layers)});
  ASSERT_TRUE(r.ok) << r.message;
  const int64_t T = 7, D = 64;
  std::vector<uint32_t> tokens;
  std::string list;
  for (int64_t j = 0; j < T; ++j) {
    tokens.push_back(static_cast<uint32_t>((j * 11 + 5) % 37));
    list += (j ? "," : "") + std::to_string(tokens.back());
  }
  std::vector<float> features(static_cast<size_t>(2 * T * D));
  testing::TinyNormal rng(4);
  for (float& x : features) x = 1.5f * rng.next();
  SafetensorsWriter w;
  w.add_f32("features", {2, T, D}, features);
  w.write(feats);
  r = testing::run_reference({"eagle-forward", drafter, "--gpt", gpt, "--tokens", list, "--features", feats, "--out",
                              ref});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile want(ref);
  const std::vector<float> want_hidden = want.read_f32("hidden"), want_logits = want.read_f32("logits");
  for (int64_t split : {T, int64_t{3}}) {
    const Outputs got = run_engine(ctx, gpt, drafter, tokens, features, split, layers);
    EXPECT_LE(nmse(got.hidden, want_hidden), 1e-6) << "split " << split;
    EXPECT_LE(nmse(got.logits, want_logits), 1e-6) << "split " << split;
  }
}

TEST_F(eagle_drafter, OneLayerMatchesPyTorch) { check_parity(ctx(), 1); }

TEST_F(eagle_drafter, TwoLayersMatchPyTorch) { check_parity(ctx(), 2); }

TEST_F(eagle_drafter, RefusesFilesOutsideTheContract) {
  const std::string dir = testing::scratch_dir("eagle_drafter_refuses");
  const std::string gpt = dir + "/gpt.safetensors", other = dir + "/other.safetensors";
  testing::TinyGptSpec t;
  testing::write_tiny_gpt(gpt, t);
  testing::TinyGptSpec wider = t;
  wider.dim = t.dim * 2;
  testing::write_tiny_gpt(other, wider);
  GptOptions opt;
  opt.weights = DType::F32;
  Gpt base(ctx(), gpt, opt), big(ctx(), other, opt);
  const std::string good = dir + "/eagle.safetensors", bad = dir + "/eagle_bad_contract.safetensors";
  testing::write_tiny_eagle_drafter(good, t, 0.1f, 3);
  EXPECT_NO_THROW(EagleDrafter(ctx(), good, base));
  EXPECT_THROW(EagleDrafter(ctx(), good, big), Error);  // another target's shapes
  EXPECT_THROW(EagleDrafter(ctx(), gpt, base), Error);  // a GPT, not a drafter
  EXPECT_THROW(EagleDrafter(ctx(), dir + "/missing.safetensors", base), Error);
  testing::write_tiny_eagle_drafter(bad, t, 0.1f, 3, {{"final_norm", "rmsnorm"}});
  EXPECT_THROW(EagleDrafter(ctx(), bad, base), Error);  // a contract the engine does not run
}

}  // namespace
}  // namespace vkspec
