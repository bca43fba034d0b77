// Text-to-image conditions through every strategy: tiny random LlamaGen-layout t2i GPTs (4
// caption positions of which a caption may leave some as padding, 3x3 tokens, vocabulary 8) with
// a drafter close to the target, draft heads and a random FlashAR model. Every registered method
// generates from a caption (the target session prefills caption positions 0..2 of every model's
// cache, and the query at the last caption position predicts image token 0); the strategies whose
// prefill paths differ (a drafter's own cache, scattered attention over prefilled slots, a
// candidate tree) are checked against ar's distribution with the two-sample chi-square test of
// the lossless suite.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "decoding/generation.h"
#include "decoding/strategy.h"
#include "decoding/strategy_inputs.h"
#include "decoding/target_session.h"
#include "engine/checks/op_check.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/draft_heads.h"
#include "engine/model/eagle_drafter.h"
#include "engine/model/flashar_model.h"
#include "engine/model/latent_heads.h"
#include "engine/model/tokenizer.h"
#include "tests/support/chi_square.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

constexpr int64_t kCaptionDim = 6, kCaptionPositions = 4;

struct T2iModels {
  std::unique_ptr<Gpt> target, drafter, low;
  std::unique_ptr<CodebookNeighbours> neighbours;
  std::unique_ptr<DraftHeads> heads;
  std::unique_ptr<LatentHeads> latent_heads;
  std::unique_ptr<EagleDrafter> eagle;
  std::unique_ptr<FlashArModel> flashar;
  ModelSet set;
};

testing::TinyGptSpec t2i_spec() {
  testing::TinyGptSpec t;
  t.vocab = testing::kTinyVocab;
  t.grid = testing::kTinyGrid;
  t.caption_dim = kCaptionDim;
  t.cls_token_num = kCaptionPositions;
  t.scale = 0.3f;  // captions through the MLP must move the image tokens visibly
  return t;
}

T2iModels& t2i_models(Context& ctx) {
  static T2iModels m = [&] {
    const std::string dir = testing::scratch_dir("t2i_models");
    const testing::TinyGptSpec t = t2i_spec();
    testing::TinyGptSpec d = t;
    d.noise_seed = 2;
    d.noise_scale = 0.03f;
    testing::write_tiny_gpt(dir + "/target.safetensors", t);
    testing::write_tiny_gpt(dir + "/drafter.safetensors", d);
    testing::write_tiny_heads(dir + "/heads.safetensors", t, 0.15f, 3);
    testing::write_tiny_latent_heads(dir + "/latent_heads.safetensors", t, 0.15f, 4);
    testing::write_tiny_eagle_drafter(dir + "/eagle.safetensors", t, 0.15f, 5);
    testing::write_tiny_flashar(dir + "/flashar.safetensors", t, 0.2f, 6);
    T2iModels r;
    GptOptions opt;
    opt.weights = DType::F32;
    r.target = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
    r.drafter = std::make_unique<Gpt>(ctx, dir + "/drafter.safetensors", opt);
    std::vector<float> codebook(testing::kTinyVocab * 2);
    for (size_t i = 0; i < codebook.size(); ++i) codebook[i] = static_cast<float>((i * 7919) % 23) / 23.0f;
    r.neighbours = std::make_unique<CodebookNeighbours>(ctx, codebook, testing::kTinyVocab, 2, testing::kTinyVocab,
                                                        "tiny codebook");
    r.heads = std::make_unique<DraftHeads>(ctx, dir + "/heads.safetensors", *r.target);
    r.set.ctx = &ctx;
    r.set.target = r.target.get();
    r.set.drafter = r.drafter.get();
    r.set.neighbours.add(r.neighbours.get());
    r.set.heads = r.heads.get();
    r.latent_heads = std::make_unique<LatentHeads>(ctx, dir + "/latent_heads.safetensors", *r.target);
    r.set.latent_heads = r.latent_heads.get();
    r.eagle = std::make_unique<EagleDrafter>(ctx, dir + "/eagle.safetensors", *r.target);
    r.set.eagle = r.eagle.get();
    r.flashar = std::make_unique<FlashArModel>(ctx, dir + "/flashar.safetensors", opt);
    r.set.flashar = r.flashar.get();
    return r;
  }();
  return m;
}

// Two captions: one fills every caption position, one only two (the rest is padding, hidden from
// attention as LlamaGen's emb_masks hide it).
std::shared_ptr<const Condition> caption(int i) {
  const int64_t tokens = i % 2 ? 2 : kCaptionPositions;
  std::vector<float> v(static_cast<size_t>(tokens * kCaptionDim));
  for (size_t k = 0; k < v.size(); ++k) v[k] = (i % 2 ? -3.0f : 3.0f) * std::sin(0.7f * static_cast<float>(k + 1));
  return std::make_shared<CaptionEmbeddings>("caption " + std::to_string(i % 2), tokens, kCaptionDim, v,
                                             std::vector<uint8_t>(static_cast<size_t>(tokens), 1));
}

class decoding_t2i : public testing::VulkanTest {
 protected:
  testing::Sample run(const std::string& method, const MethodOptions& o, uint64_t first_seed, int images,
                      bool keep_events = false) {
    return testing::run_images(ctx(), testing::by_name(method), o, first_seed, images, keep_events,
                               &t2i_models(ctx()).set, caption);
  }
};

// Every method but MuLo-SD (its own models below) on the t2i set: complete, consistent events.
TEST_F(decoding_t2i, EveryMethodGeneratesFromACaption) {
  for (const std::string& method : strategy_names()) {
    // MuLo-SD below; FlashAR on its own tiny random post-trained backbone.
    if (find_strategy(method).needs_for({}).low_res) continue;
    SCOPED_TRACE(method);
    // eagle's default tree (1 + 60 + 6 queries), adaptive-tree's and vvs's and sjd-pac's 64 nodes (+
    // 2 repairs) are larger than the tiny models' 64.
    const bool tree = method == "eagle" || method == "adaptive-tree" || method == "vvs";
    const MethodOptions options = tree                  ? MethodOptions{{"nodes", "12"}}
                                  : method == "sjd-pac" ? MethodOptions{{"window", "16"}}
                                                        : MethodOptions{};
    const testing::Sample s = run(method, options, 5, 4, true);
    ASSERT_EQ(s.grids.size(), 4u);
    for (const auto& g : s.grids)
      for (int32_t t : g) EXPECT_TRUE(t >= 0 && t < testing::kTinyVocab);
  }
}

// MuLo-SD needs a tokenizer for its pixel path: t2i models on the shipped tokenizer's vocabulary.
TEST_F(decoding_t2i, MuloGeneratesFromACaption) {
  const std::string dir = testing::scratch_dir("t2i_mulo_models");
  testing::TinyGptSpec t = t2i_spec();
  t.vocab = 1024;
  t.grid = 4;
  testing::TinyGptSpec l = t;
  l.grid = 2;
  l.seed = 7;
  testing::write_tiny_gpt(dir + "/target.safetensors", t);
  testing::write_tiny_gpt(dir + "/low.safetensors", l);
  GptOptions opt;
  opt.weights = DType::F32;
  Gpt target(ctx(), dir + "/target.safetensors", opt), low(ctx(), dir + "/low.safetensors", opt);
  const std::unique_ptr<Tokenizer> tokenizer =
      load_tokenizer(ctx(), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors", DType::F32, 1, 4);
  CodebookNeighbours neighbours(ctx(), *tokenizer, 16);
  ModelSet m;
  m.ctx = &ctx();
  m.target = &target;
  m.low_res = &low;
  m.tokenizer = tokenizer.get();
  m.neighbours.add(&neighbours);
  for (const MethodOptions& o : {MethodOptions{}, MethodOptions{{"resample", "coupled"}}}) {
    const testing::Sample s = testing::run_images(ctx(), testing::by_name("mulo"), o, 3, 2, true, &m, caption);
    for (const auto& g : s.grids)
      for (int32_t tok : g) EXPECT_TRUE(tok >= 0 && tok < 1024);
  }
}

// LlamaGen's t2i models have 120 caption positions, more than one forward of a model loaded for
// 64 queries runs: the prefill goes in chunks, for the target and a drafter alike.
TEST_F(decoding_t2i, LongCaptionsPrefillInChunks) {
  const std::string dir = testing::scratch_dir("t2i_long_models");
  testing::TinyGptSpec t = t2i_spec();
  t.cls_token_num = 120;
  testing::write_tiny_gpt(dir + "/target.safetensors", t);
  GptOptions opt;
  opt.weights = DType::F32;
  opt.max_queries = 16;
  Gpt target(ctx(), dir + "/target.safetensors", opt);
  ModelSet m;
  m.ctx = &ctx();
  m.target = &target;
  m.drafter = &target;
  for (const std::string method : {"ar", "sd", "scd-mc"}) {
    const MethodOptions o = method == "ar" ? MethodOptions{} : MethodOptions{{"window", "4"}};
    const testing::Sample s = testing::run_images(ctx(), testing::by_name(method), o, 9, 2, false, &m, caption);
    ASSERT_EQ(s.grids.size(), 2u) << method;
  }
  // The same images as one forward over all caption positions would give (ar, equal seeds).
  GptOptions wide = opt;
  wide.max_queries = 128;
  Gpt whole(ctx(), dir + "/target.safetensors", wide);
  ModelSet w = m;
  w.target = &whole;
  const auto chunked = testing::run_images(ctx(), testing::by_name("ar"), {}, 9, 2, false, &m, caption).grids;
  const auto at_once = testing::run_images(ctx(), testing::by_name("ar"), {}, 9, 2, false, &w, caption).grids;
  EXPECT_EQ(chunked, at_once);
}

// Several images per forward: 5 captioned images in 2 lanes (the window methods, sjd-pac and the
// EAGLE family with continuous batching, each new image's caption prefilled into its lane's cache
// rows beside the other lane's queries; ar and flashar in lockstep pairs) get the tokens each
// gets alone, with captions of different lengths in one forward (each image's attention hides its
// own caption's padding, EAGLE-2's cut on the device included).
TEST_F(decoding_t2i, BatchedImagesGetTheirCaptionsTokensAlone) {
  ModelSet m = t2i_models(ctx()).set;  // first: it writes the model files (each case runs in its own process)
  GptOptions opt;
  opt.weights = DType::F32;
  opt.batch_rows = 4;
  Gpt target(ctx(), testing::scratch_dir("t2i_models") + "/target.safetensors", opt);
  m.target = &target;
  FlashArModel flashar(ctx(), testing::scratch_dir("t2i_models") + "/flashar.safetensors", opt);
  m.flashar = &flashar;
  std::vector<StrategyInputs> in(5);
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t tokens = i % 3 == 1 ? 2 : kCaptionPositions;  // images 1 and 4: half padding
    std::vector<float> v(static_cast<size_t>(tokens * kCaptionDim));
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = 3.0f * std::sin(0.7f * static_cast<float>(k + 1) + static_cast<float>(i));
    in[i].condition = std::make_shared<CaptionEmbeddings>("caption " + std::to_string(i), tokens, kCaptionDim, v,
                                                          std::vector<uint8_t>(static_cast<size_t>(tokens), 1));
    in[i].seed = 40 + i;
    in[i].sampler = testing::tiny_settings();
  }
  const MethodOptions tree = {{"nodes", "12"}, {"depth", "4"}};
  for (const std::string method : {"scd-mc", "sjd", "sjd-pac", "ar", "eagle", "vvs", "lantern", "flashar"}) {
    for (StrategyInputs& x : in)
      x.options = method == "ar" || method == "flashar" ? MethodOptions{}
                  : method == "sjd-pac"                 ? MethodOptions{{"width", "2"}, {"depth", "2"}, {"window", "5"}}
                  : method == "eagle" || method == "vvs" ? tree
                  : method == "lantern" ? MethodOptions{{"nodes", "12"}, {"depth", "4"}, {"drafter", "eagle"}}
                                        : MethodOptions{{"window", "3"}};
    const std::vector<Generation> batched = generate_batch(method, m, in, false, {}, 2);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(batched[i].tokens, generate_one(method, m, in[i], false).tokens) << method << " image " << i;
  }
}

// The condition logits of image 1 (the query at the last caption position, CFG rows) after the
// session's prefill of `images` (image 1 is the last).
std::vector<float> first_logits(Context& ctx, const ModelSet& m, const std::vector<StrategyInputs>& images) {
  TargetSession t(m, images, "prefill test", 1);
  const GptOutputs out = t.forward(t.causal(0, 1, {}));
  const int64_t V = t.config().vocab_size, G = t.images();
  Tensor host = ctx.tensor(DType::F32, {t.rows(), V}, "logits", MemoryUsage::Readback);
  t.stream().copy(out.logits.rows(0, t.rows()), host);
  t.submit_and_wait();
  const std::vector<float> all = download_floats(ctx, host);
  std::vector<float> last(all.begin() + (G - 1) * V, all.begin() + G * V);  // its conditional row
  last.insert(last.end(), all.begin() + (2 * G - 1) * V, all.end());        // its null row
  return last;
}

// The session's prefill of a batch hides each image's own caption padding: a full caption beside
// a padded one gets the logits it gets alone (with the padded image's padding hidden from it as
// well, its prefilled keys and values would lose half its caption).
TEST_F(decoding_t2i, BatchedPrefillHidesEachImagesOwnPadding) {
  // Two blocks: the first block's keys and values come from the embeddings alone, whatever hides.
  testing::TinyGptSpec spec = t2i_spec();
  spec.layers = 2;
  const std::string path = testing::scratch_dir("t2i_prefill") + "/target.safetensors";
  testing::write_tiny_gpt(path, spec);
  GptOptions opt;
  opt.weights = DType::F32;
  opt.batch_rows = 4;
  Gpt target(ctx(), path, opt);
  ModelSet m;
  m.ctx = &ctx();
  m.target = &target;
  std::vector<StrategyInputs> in(2);
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t tokens = i == 0 ? 1 : kCaptionPositions;
    std::vector<float> v(static_cast<size_t>(tokens * kCaptionDim));
    for (size_t k = 0; k < v.size(); ++k) v[k] = 3.0f * std::sin(0.7f * static_cast<float>(k + 1) + 2.0f * i);
    in[i].condition = std::make_shared<CaptionEmbeddings>("caption " + std::to_string(i), tokens, kCaptionDim, v,
                                                          std::vector<uint8_t>(static_cast<size_t>(tokens), 1));
    in[i].sampler = testing::tiny_settings();
  }
  const std::vector<float> together = first_logits(ctx(), m, in), alone = first_logits(ctx(), m, {in[1]});
  EXPECT_LT(normalised_error(together, alone), 1e-5);
}

// The caption reaches the image: two captions give different token distributions at the first
// position (with the first caption's second half as padding in the other).
TEST_F(decoding_t2i, TheCaptionChangesTheImage) {
  const testing::Sample s = run("ar", {}, 100, 400);
  std::vector<uint64_t> a(testing::kTinyVocab), b(testing::kTinyVocab);
  for (size_t i = 0; i < s.grids.size(); ++i) ++(i % 2 ? b : a)[static_cast<size_t>(s.grids[i][0])];
  EXPECT_FALSE(testing::two_sample_chi_square(a, b).fits()) << "the two captions' images look alike";
}

// Lossless on a text-to-image model, where every model's caption positions are prefilled: the
// drafter's own cache (sd), queries over scattered prefilled slots (zipar --verify exact), a
// candidate tree above them (hawk).
TEST_F(decoding_t2i, LosslessMethodsMatchArWithCaptions) {
  constexpr int kImages = 2000;
  const testing::Sample ar = run("ar", {}, 1000000, kImages);
  const std::vector<std::pair<std::string, MethodOptions>> methods = {
      {"sd", {{"window", "3"}}}, {"zipar", {{"window", "1"}, {"verify", "exact"}}}, {"hawk", {}}};
  for (const auto& [method, options] : methods) {
    const testing::Sample s = run(method, options, 0, kImages);
    for (int64_t pos : {0, 4, 8}) {
      std::vector<uint64_t> h(testing::kTinyVocab), r(testing::kTinyVocab);
      for (const auto& g : s.grids) ++h[static_cast<size_t>(g[static_cast<size_t>(pos)])];
      for (const auto& g : ar.grids) ++r[static_cast<size_t>(g[static_cast<size_t>(pos)])];
      const testing::ChiSquare c = testing::two_sample_chi_square(h, r);
      EXPECT_TRUE(c.fits()) << method << " differs from ar at position " << pos << ": " << c.str();
    }
  }
}

// Under greedy settings the target's distribution is a point mass, so a lossless method must
// reproduce ar's tokens exactly. The draft trees' queries (EAGLE-2's cut on the device, a static
// tree, hawk's) must hide a caption's padding as ar's do: a tree node that attended to the padded
// positions would get other logits, and soon another token.
TEST_F(decoding_t2i, TreeMethodsMatchGreedyArWithPaddedCaptions) {
  SamplerSettings greedy = testing::tiny_settings();
  greedy.top_k = 1;
  greedy.top_p = 1.0f;
  constexpr int kImages = 12;
  const auto run_greedy = [&](const std::string& method, const MethodOptions& o) {
    return testing::run_images(ctx(), testing::by_name(method, greedy), o, 300, kImages, false, &t2i_models(ctx()).set,
                               caption);
  };
  const testing::Sample ar = run_greedy("ar", {});
  const std::vector<std::pair<std::string, MethodOptions>> methods = {{"eagle", {{"nodes", "12"}}},
                                                                      {"eagle", {{"nodes", "12"}, {"tree", "static"}}},
                                                                      {"adaptive-tree", {{"nodes", "12"}}},
                                                                      {"hawk", {}},
                                                                      {"sjd-pac", {{"window", "16"}}}};
  for (const auto& [method, options] : methods) {
    const testing::Sample s = run_greedy(method, options);
    for (int i = 0; i < kImages; ++i)
      EXPECT_EQ(s.grids[static_cast<size_t>(i)], ar.grids[static_cast<size_t>(i)])
          << method << (options.count("tree") ? " --tree " + options.at("tree") : "") << " image " << i
          << (i % 2 ? " (padded caption)" : "");
  }
}

}  // namespace
}  // namespace vkspec
