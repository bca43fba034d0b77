// Every decoding method on the Janus-Pro family (engine/families/janus_family.cpp): tiny random
// Janus models (1D RoPE, prompt embeddings at 5 condition positions, gen_aligner table in,
// gen_head MLP out; 3x3 tokens, vocabulary 8) with a Janus drafter close to the target and random
// draft heads, SSD latent heads and an EAGLE drafter on it (their logits through gen_head, the
// drafter at the target's 1D positions). Prompts of two lengths (one leaves condition positions as
// padding) each with Janus's own unconditional row.
// Checked: every method generates with complete, consistent events, or, where it needs a model
// this set lacks (MuLo-SD's low-resolution model), refuses by naming it; the lossless
// methods match ar's distribution (the lossless suite's chi-square test); batches give each image
// the tokens it gets alone.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "decoding/generation.h"
#include "decoding/strategy.h"
#include "engine/checks/op_check.h"
#include "engine/model/codebook_neighbours.h"
#include "tests/support/cached_sample.h"
#include "tests/support/chi_square.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

constexpr int64_t kPromptPositions = 5, kJanusImages = 2000;

// The tiny set's members (target, drafter, neighbours, companions) and a batched target.
struct JanusModels : testing::TinyModels {
  std::unique_ptr<Gpt> batched;
};

testing::TinyGptSpec janus_spec() {
  testing::TinyGptSpec t;
  t.vocab = testing::kTinyVocab;
  t.grid = testing::kTinyGrid;
  t.scale = 0.3f;
  return t;
}

JanusModels& janus_models(Context& ctx) {
  static JanusModels m = [&] {
    const std::string dir = testing::scratch_dir("janus_models");
    const testing::TinyGptSpec t = janus_spec();
    testing::TinyGptSpec d = t;
    d.noise_seed = 2;
    d.noise_scale = 0.03f;
    testing::write_tiny_janus(dir + "/target.safetensors", t, kPromptPositions);
    testing::write_tiny_janus(dir + "/drafter.safetensors", d, kPromptPositions);
    JanusModels r;
    r.dir = dir;
    GptOptions opt;
    opt.weights = DType::F32;
    opt.max_queries = 128;  // EAGLE's default tree (60 nodes and its catch-up) in one forward
    r.target = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
    r.drafter = std::make_unique<Gpt>(ctx, dir + "/drafter.safetensors", opt);
    opt.batch_rows = 6;
    r.batched = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
    std::vector<float> codebook(testing::kTinyVocab * 2);
    for (size_t i = 0; i < codebook.size(); ++i) codebook[i] = static_cast<float>((i * 7919) % 23) / 23.0f;
    r.neighbours = std::make_unique<CodebookNeighbours>(ctx, codebook, testing::kTinyVocab, 2, testing::kTinyVocab,
                                                        "tiny codebook");
    r.set.ctx = &ctx;
    r.set.target = r.target.get();
    r.set.drafter = r.drafter.get();
    r.set.neighbours.add(r.neighbours.get());
    testing::add_tiny_companions(ctx, r, t, "janus-pro");
    return r;
  }();
  return m;
}

// Two prompts as Janus makes them: BOS, words, <begin_of_image> (5 or 3 tokens; the shorter one
// leaves two condition positions as padding), each with its unconditional row (the middle
// replaced by pad) as the rows of the model's text table.
std::shared_ptr<const Condition> prompt(int i) {
  static const std::vector<std::shared_ptr<const Condition>> prompts = [] {
    const std::string model = testing::scratch_dir("janus_models") + "/target.safetensors";
    return std::vector<std::shared_ptr<const Condition>>{testing::tiny_janus_prompt(model, {3, 7, 1}, "prompt 0"),
                                                         testing::tiny_janus_prompt(model, {9}, "prompt 1")};
  }();
  return prompts[static_cast<size_t>(i % 2)];
}

class decoding_janus : public testing::VulkanTest {
 protected:
  void SetUp() override {
    testing::VulkanTest::SetUp();
    janus_models(ctx());
  }
  testing::Sample run(const std::string& method, const MethodOptions& o, uint64_t first_seed, int images,
                      bool keep_events = false) {
    return testing::run_images(ctx(), testing::by_name(method), o, first_seed, images, keep_events,
                               &janus_models(ctx()).set, prompt);
  }
  void expect_matches_ar(const std::string& method, const MethodOptions& o) {
    // Computed once per build for every case (each runs in its own process under CTest).
    const std::string dir = testing::scratch_dir("janus_models");
    testing::OtherModels janus{&janus_models(ctx()).set, prompt, {dir + "/target.safetensors"}};
    static const testing::Sample ar =
        testing::cached_run_images(ctx(), "ar", {}, 1000000, kJanusImages, testing::tiny_settings(), janus);
    const testing::Sample s = run(method, o, 0, kJanusImages);
    std::string report;
    bool same = true;
    for (const auto& [pos, pair] :
         std::vector<std::pair<int64_t, bool>>{{0, false}, {4, false}, {8, false}, {7, true}}) {
      const testing::ChiSquare c = testing::two_sample_chi_square(testing::token_histogram(s, pos, pair),
                                                                  testing::token_histogram(ar, pos, pair));
      same = same && c.fits();
      report += "  position " + std::to_string(pos) + (pair ? "+1" : "") + ": " + c.str() + "\n";
    }
    std::printf("%s on janus-pro: %.2f target forwards per image (ar %.2f)\n%s", method.c_str(), s.nfe_per_image,
                ar.nfe_per_image, report.c_str());
    EXPECT_TRUE(same) << method << " differs from ar on the Janus family:\n" << report;
  }
};

TEST_F(decoding_janus, EveryMethodGeneratesFromAPromptOrNamesWhatItNeeds) {
  for (const std::string& method : strategy_names()) {
    SCOPED_TRACE(method);
    const StrategyNeeds n = find_strategy(method).needs_for({});
    const MethodOptions options = method == "sjd-pac" ? MethodOptions{{"window", "16"}} : MethodOptions{};
    if (n.low_res || n.flashar) {
      // Not in the set (FlashAR's Janus-Pro files are tests/test_flashar.cpp's): the method says
      // which model it lacks.
      try {
        run(method, options, 5, 1);
        ADD_FAILURE() << method << " ran without the model it needs";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.find("head") != std::string::npos || what.find("drafter") != std::string::npos ||
                    what.find("low-res") != std::string::npos || what.find("model") != std::string::npos)
            << what;
      }
      continue;
    }
    const testing::Sample s = run(method, options, 5, 4, true);
    ASSERT_EQ(s.grids.size(), 4u);
    for (const auto& g : s.grids)
      for (int32_t t : g) EXPECT_TRUE(t >= 0 && t < testing::kTinyVocab);
  }
}

// Draft heads and latent heads get their logits through gen_head (Gpt::project), whatever the
// number of rows: more rows than the forward's scratch holds give each row what it gets alone.
TEST_F(decoding_janus, ImageHeadProjectsAnyNumberOfRows) {
  JanusModels& m = janus_models(ctx());
  const int64_t D = m.target->config().dim, V = m.target->config().vocab_size;
  const int64_t R = m.target->options().batch_rows * m.target->options().max_queries + 5;
  std::vector<float> h(static_cast<size_t>(R * D));
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  Tensor hidden = ctx().tensor(DType::F32, {R, D}, "hidden"), all = ctx().tensor(DType::F32, {R, V}, "all rows");
  Tensor one = ctx().tensor(DType::F32, {1, V}, "one row");
  ctx().upload(hidden, h.data(), h.size() * 4);
  std::vector<float> together(static_cast<size_t>(R * V)), alone(static_cast<size_t>(V));
  {
    CommandStream s(ctx());
    m.target->project(s, hidden.view(), all.view());
    s.submit_and_wait();
  }
  ctx().download(all, together.data(), together.size() * 4);
  for (int64_t r : {int64_t{0}, R / 2, R - 1}) {
    CommandStream s(ctx());
    m.target->project(s, hidden.view().rows(r, 1), one.view());
    s.submit_and_wait();
    ctx().download(one, alone.data(), alone.size() * 4);
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(together[static_cast<size_t>(r * V + v)], alone[static_cast<size_t>(v)], 1e-5f) << r << "," << v;
  }
}

// Heads and drafters read the base's hidden states: ones trained on a LlamaGen model (files
// without base_family, as the shipped fmnist_gpt16_heads) are refused on a Janus-Pro target even
// where their sizes fit.
TEST_F(decoding_janus, HeadsOfAnotherFamilyAreRefused) {
  const std::string dir = testing::scratch_dir("janus_models");
  testing::write_tiny_heads(dir + "/llamagen_heads.safetensors", janus_spec(), 0.15f, 3);
  testing::write_tiny_latent_heads(dir + "/llamagen_latent_heads.safetensors", janus_spec(), 0.15f, 4);
  testing::write_tiny_eagle_drafter(dir + "/llamagen_eagle.safetensors", janus_spec(), 0.15f, 5);
  for (const char* file : {"llamagen_heads", "llamagen_latent_heads", "llamagen_eagle"}) {
    SCOPED_TRACE(file);
    const std::string path = dir + "/" + file + ".safetensors";
    try {
      const Gpt& target = *janus_models(ctx()).target;
      if (std::string(file) == "llamagen_heads")
        DraftHeads(ctx(), path, target);
      else if (std::string(file) == "llamagen_latent_heads")
        LatentHeads(ctx(), path, target);
      else
        EagleDrafter(ctx(), path, target);
      ADD_FAILURE() << "loaded on a Janus-Pro target";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("trained on a llamagen model"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("janus-pro"), std::string::npos) << e.what();
    }
  }
}

// hawk, ssd and eagle on Janus-Pro against its exact law: tests/test_exact_law.cpp.

// A null form that hides its own padding (CaptionEmbeddings::own_mask, Lumina-mGPT's CFG row: the
// prompt hidden, its last tokens seen) gets a mask of its own: its row's logits are those of a
// conditional row holding just those tokens, right-aligned, at the same positions.
TEST_F(decoding_janus, NullRowHidesItsOwnPadding) {
  Gpt& target = *janus_models(ctx()).target;
  const GptConfig& cfg = target.config();
  const SafetensorsFile f(testing::scratch_dir("janus_models") + "/target.safetensors");
  const std::vector<float> table = f.read_f32("text_embeddings.weight");
  const int64_t D = cfg.dim;
  auto rows = [&](const std::vector<int64_t>& ids) {
    std::vector<float> v;
    for (int64_t id : ids) v.insert(v.end(), table.begin() + id * D, table.begin() + (id + 1) * D);
    return v;
  };
  const std::vector<int64_t> full = {f.meta_int("bos_id"), 3, 7, 1, f.meta_int("image_start_id")};
  const std::vector<int64_t> tail(full.end() - 3, full.end());
  auto ids = [](const std::vector<int64_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); };
  auto own =
      std::make_shared<CaptionEmbeddings>("prompt hidden", 5, D, rows(full), std::vector<uint8_t>{0, 0, 1, 1, 1});
  own->set_prompt("prompt", ids(full), nullptr);
  own->set_own_mask(true);
  CaptionEmbeddings a("prompt", 5, D, rows(full), std::vector<uint8_t>(5, 1));
  a.set_prompt("prompt", ids(full), own);
  CaptionEmbeddings b("its tail", 3, D, rows(tail), std::vector<uint8_t>(3, 1));
  b.set_prompt("tail", ids(tail), nullptr);
  const std::vector<uint32_t> tokens = {2, 5, 1, 6};
  auto logits = [&](const std::vector<const Condition*>& conditions) {
    KvCache cache = target.make_cache(0, 2);
    const GptQueries q = GptQueries::causal(cfg, 0, cfg.cls_token_num + 4, tokens, conditions, cache.slots());
    GptBatch batch(ctx(), cfg, q, 2, cache.slots());
    CommandStream s(ctx());
    GptOutputs out = target.forward(s, batch, cache);
    Tensor copy = ctx().tensor(DType::F32, out.logits.shape, "logits");
    s.copy(out.logits, copy);
    s.submit_and_wait();
    return download_floats(ctx(), copy);
  };
  const std::vector<float> with_own = logits({&a, own.get()}), tail_only = logits({&b, &b});
  const int64_t T = cfg.cls_token_num + 4, V = cfg.vocab_size;
  double worst = 0, scale = 0;
  for (int64_t t = cfg.cls_token_num - 1; t < T; ++t)
    for (int64_t v = 0; v < V; ++v) {
      const float null_row = with_own[static_cast<size_t>((T + t) * V + v)];
      worst = std::max<double>(worst, std::fabs(null_row - tail_only[static_cast<size_t>(t * V + v)]));
      scale = std::max<double>(scale, std::fabs(null_row));
    }
  EXPECT_LT(worst, 1e-5 * scale) << "the null row's logits differ from the tail's by " << worst;
  // And the conditional row of the pair still sees the whole prompt.
  double cond_diff = 0;
  for (int64_t v = 0; v < V; ++v)
    cond_diff = std::max<double>(cond_diff, std::fabs(with_own[static_cast<size_t>((T - 1) * V + v)] -
                                                      tail_only[static_cast<size_t>((T - 1) * V + v)]));
  EXPECT_GT(cond_diff, 1e-3);
}

// A drafter of half the target's width (Janus-Pro-1B drafting for 7B, in small): the prompt's rows
// from the target's table would not fit it; it reads the prompt's ids through its own.
TEST_F(decoding_janus, SdDrafterReadsThePromptThroughItsOwnTable) {
  const std::string dir = testing::scratch_dir("janus_models");
  testing::TinyGptSpec narrow = janus_spec();
  narrow.dim = 16;
  narrow.ffn_hidden = 32;
  narrow.seed = 9;
  testing::write_tiny_janus(dir + "/narrow_drafter.safetensors", narrow, kPromptPositions);
  GptOptions opt;
  opt.weights = DType::F32;
  Gpt drafter(ctx(), dir + "/narrow_drafter.safetensors", opt);
  ModelSet set = janus_models(ctx()).set;
  set.drafter = &drafter;
  const testing::Sample s =
      testing::run_images(ctx(), testing::by_name("sd"), {{"window", "3"}}, 5, 4, true, &set, prompt);
  ASSERT_EQ(s.grids.size(), 4u);
  EXPECT_GT(s.nfe_per_image, 0.0);
}

TEST_F(decoding_janus, ScdMaximalCouplingMatchesAr) { expect_matches_ar("scd-mc", {{"window", "4"}}); }
TEST_F(decoding_janus, SjdPacMatchesAr) {
  expect_matches_ar("sjd-pac", {{"width", "2"}, {"depth", "3"}, {"window", "8"}});
}
TEST_F(decoding_janus, SjdMatchesAr) { expect_matches_ar("sjd", {{"window", "4"}}); }
TEST_F(decoding_janus, DraftModelSdMatchesAr) { expect_matches_ar("sd", {{"window", "3"}}); }

// Three images per forward give each image the tokens it gets alone (ragged batches of prompts of
// two lengths, with continuous batching).
TEST_F(decoding_janus, BatchesGiveEachImageItsTokensAlone) {
  JanusModels& m = janus_models(ctx());
  ModelSet batched = m.set;
  batched.target = m.batched.get();
  const std::vector<std::pair<std::string, MethodOptions>> runs = {
      {"ar", {}},
      {"scd-mc", {}},
      {"sjd-pac", {{"width", "2"}, {"depth", "3"}, {"window", "8"}}},
      {"zipar", {}},
      {"eagle", {{"nodes", "12"}, {"depth", "4"}}},
      {"vvs", {{"nodes", "12"}, {"depth", "4"}}}};
  for (const auto& [method, options] : runs) {
    SCOPED_TRACE(method);
    std::vector<StrategyInputs> inputs(7);
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i].condition = prompt(static_cast<int>(i));
      inputs[i].seed = 40 + i;
      inputs[i].sampler = testing::tiny_settings();
      inputs[i].options = options;
    }
    const std::vector<Generation> together = generate_batch(method, batched, inputs, false, {}, 3);
    for (size_t i = 0; i < inputs.size(); ++i)
      EXPECT_EQ(together[i].tokens, generate_one(method, m.set, inputs[i], false).tokens) << "image " << i;
  }
}

}  // namespace
}  // namespace vkspec
