// FlashAR on the engine (engine/model/flashar_model.h, decoding/flashar_strategy.h) against the
// PyTorch reference (tools/flashar_model.py through tools/reference.py) on a small random model:
// both heads under the diagonal mask (f32 weights and cache, NMSE <= 1e-5), the host gate on the
// reference's own head logits, greedy diagonal decoding with CFG token for token (class- and
// text-conditional), the steps' events, and the refusals (a FlashAR file as a plain target, a
// plain GPT as FlashAR). On Janus-Pro, with tiny random files written here (no PyTorch): the
// vertical head is gen_head's MLP under `vertical.`, decoding with CFG takes 2W - 1 forwards with
// the prompt's rows of the backbone's own text table, a batch gives each image its own tokens, and
// the refusals (no vertical head, a stray branch tensor, no branch, a target it does not fit). On
// tiny converted Janus-Pro and Lumina-mGPT models with random branches (tools/flashar_janus.py,
// flashar_lumina.py): greedy diagonal decoding from a prompt with CFG, token for token (Lumina's
// line breaks fed with their row ends, standing for them as V's source).
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "decoding/flashar_strategy.h"
#include "decoding/generation.h"
#include "engine/checks/op_check.h"
#include "engine/model/condition.h"
#include "engine/model/flashar_model.h"
#include "engine/ops/attention_mask.h"
#include "frontend/model_loading.h"
#include "tests/support/greedy_parity.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

constexpr int64_t kGrid = 4, kVocab = 64, kCells = kGrid * kGrid;

class FlashArTest : public testing::VulkanTest {
 protected:
  // A random GPT (3 blocks) and a random FlashAR on it with its branch at block 2, once per test.
  bool make_models(const std::string& name) {
    dir_ = testing::scratch_dir("flashar_" + name);
    gpt_ = dir_ + "/gpt.safetensors";
    flashar_ = dir_ + "/flashar.safetensors";
    auto r = testing::run_reference({"make-gpt", gpt_, "--dim", "64", "--layers", "3", "--heads", "2", "--vocab",
                                     std::to_string(kVocab), "--classes", "5", "--grid", std::to_string(kGrid)});
    if (r.skipped) return false;
    EXPECT_TRUE(r.ok) << r.message;
    r = testing::run_reference({"make-flashar", flashar_, "--gpt", gpt_});
    EXPECT_TRUE(r.ok) << r.message;
    return r.ok;
  }
  static GptOptions f32_options() {
    GptOptions o;
    o.weights = DType::F32;
    o.kv = DType::F32;
    o.batch_rows = 2;
    o.max_queries = 1 + kCells;
    return o;
  }

  std::string dir_, gpt_, flashar_;
};

// A set whose target is the FlashAR file's own backbone, as the CLI makes it.
ModelSet flashar_set(Context& ctx, FlashArModel& model) {
  ModelSet set;
  set.ctx = &ctx;
  set.target = &model.backbone();
  set.flashar = &model;
  return set;
}

// gen's tokens in the reference's decoding order (diagonal by diagonal, its "order" list) against
// its greedy tokens.
void expect_reference_order(const std::string& what, const Generation& gen, const std::string& greedy) {
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(greedy));
  std::vector<int32_t> in_order;
  for (int64_t cell : j.at("order").get<std::vector<int64_t>>())
    in_order.push_back(gen.tokens[static_cast<size_t>(cell)]);
  testing::expect_greedy_tokens_match(what, in_order, greedy);
}

// The inputs decoded in one batch get, image for image, the tokens and the steps' cells they get
// alone, each in 2W - 1 forwards; and they are not all one image.
void expect_batch_is_alone(const ModelSet& set, const std::vector<StrategyInputs>& inputs) {
  const std::vector<Generation> together = generate_batch("flashar", set, inputs);
  ASSERT_EQ(together.size(), inputs.size());
  bool differ = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Generation alone = generate_one("flashar", set, inputs[i], true);
    EXPECT_EQ(together[i].tokens, alone.tokens) << "image " << i;
    EXPECT_EQ(together[i].nfe, 2 * set.target->config().grid_size - 1);
    ASSERT_EQ(together[i].events.size(), alone.events.size());
    for (size_t k = 0; k < alone.events.size(); ++k)
      EXPECT_EQ(together[i].events[k].accepted, alone.events[k].accepted);
    differ |= i > 0 && together[i].tokens != together[0].tokens;
  }
  EXPECT_TRUE(differ) << inputs.size() << " conditions and seeds gave one image";
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  const double e = normalised_error(got, want);
  return e * e;
}

TEST_F(FlashArTest, HeadsAndGateMatchReference) {
  if (!make_models("heads")) GTEST_SKIP() << "PyTorch not available";
  std::vector<uint32_t> tokens;
  std::vector<int32_t> fed;
  for (int64_t i = 0; i < kCells; ++i) {
    tokens.push_back(static_cast<uint32_t>((i * 7 + 3) % kVocab));
    fed.push_back(static_cast<int32_t>(tokens.back()));
  }
  const std::string ref = dir_ + "/logits.safetensors";
  auto r = testing::run_reference({"flashar-logits", flashar_, "--label", "2", "--tokens", testing::comma_list(fed),
                                   "--out", ref});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile reference(ref);
  const std::vector<float> want_h = reference.read_f32("h"), want_v = reference.read_f32("v");

  FlashArModel model(ctx(), flashar_, f32_options());
  EXPECT_EQ(model.vertical_start(), 2);
  EXPECT_EQ(model.vertical_layers(), 1);
  const GptConfig& cfg = model.config();
  KvCache cache = model.backbone().make_cache();
  KvCache branch = model.make_branch_cache(cache);
  // The training layout in one forward: the class token, then every cell under the diagonal mask.
  const ClassLabel label(2);  // the batch reads it, so it outlives the queries
  GptQueries q = GptQueries::causal(cfg, 0, 1 + kCells, tokens, guided_rows(label, 2), cache.slots());
  ops::AttentionMaskBuilder mb(1 + kCells, cache.slots());
  mb.see(0, 0);
  for (int64_t n = 0; n < kCells; ++n) {
    mb.see(1 + n, 0);
    for (int64_t m = 0; m < kCells; ++m)
      if (m / kGrid + m % kGrid <= n / kGrid + n % kGrid) mb.see(1 + n, 1 + m);
  }
  q.mask = mb.pack();
  GptBatch batch(ctx(), cfg, q, 2, cache.slots());
  CommandStream s(ctx());
  const FlashArOutputs out = model.forward(s, batch, cache, branch);
  Tensor h = ctx().tensor(DType::F32, out.h_logits.shape, "h copy"),
         v = ctx().tensor(DType::F32, out.v_logits.shape, "v copy");
  s.copy(out.h_logits, h);
  s.copy(out.v_logits, v);
  s.submit_and_wait();
  const std::vector<float> got_h = download_floats(ctx(), h), got_v = download_floats(ctx(), v);
  std::cout << "H NMSE " << nmse(got_h, want_h) << ", V NMSE " << nmse(got_v, want_v) << "\n";
  EXPECT_LE(nmse(got_h, want_h), 1e-5);
  EXPECT_LE(nmse(got_v, want_v), 1e-5);

  // The gate (ops::flashar_fuse, gated at every target) on the reference's own heads: H of the left
  // neighbour (the class token at column 0), V of the upper one (the class token at row 0).
  std::vector<uint32_t> sources;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t n = 0; n < kCells; ++n) {
      const int64_t hs = n % kGrid > 0 ? n : 0, vs = n / kGrid > 0 ? 1 + n - kGrid : 0;
      sources.insert(sources.end(),
                     {static_cast<uint32_t>(b * (1 + kCells) + hs), static_cast<uint32_t>(b * (1 + kCells) + vs), 0u});
    }
  Tensor th = upload_floats(ctx(), want_h, DType::F32, {2 * (1 + kCells), kVocab}, "reference h");
  Tensor tv = upload_floats(ctx(), want_v, DType::F32, {2 * (1 + kCells), kVocab}, "reference v");
  Tensor ts = ctx().tensor(DType::U32, {2 * kCells, 3}, "sources");
  ctx().upload(ts, sources.data(), sources.size() * 4);
  // Each kind of gate: this file's (the released --hv-gate, normalising [H; V] as one), the MLP
  // normalising head by head (files from before flashar.gate_norm), and a constant (--hv-mix).
  for (const std::vector<std::string>& gate :
       {std::vector<std::string>{}, {"--gate-norm", "per-head"}, {"--gate", "constant"}}) {
    std::string file = flashar_, want = ref;
    if (!gate.empty()) {
      file = dir_ + "/flashar_" + gate[1] + ".safetensors";
      want = dir_ + "/logits_" + gate[1] + ".safetensors";
      std::vector<std::string> make = {"make-flashar", file, "--gpt", gpt_};
      make.insert(make.end(), gate.begin(), gate.end());
      for (const std::vector<std::string>& args :
           {make, {"flashar-logits", file, "--label", "2", "--tokens", testing::comma_list(fed), "--out", want}}) {
        r = testing::run_reference(args);
        ASSERT_TRUE(r.ok) << r.message;
      }
    }
    const std::vector<float> want_g = SafetensorsFile(want).read_f32("g");
    FlashArModel gated(ctx(), file, f32_options());
    Tensor fused = ctx().tensor(DType::F32, {2 * kCells, kVocab}, "fused"),
           gates = ctx().tensor(DType::F32, {2 * kCells}, "gates");
    CommandStream g(ctx());
    gated.fuse(g, FlashArOutputs{th.view(), tv.view()}, ts, fused, gates);
    g.submit_and_wait();
    const std::vector<float> got_g = download_floats(ctx(), gates);
    double worst = 0;
    for (size_t i = 0; i < got_g.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(got_g[i]) - want_g[i]));
    std::cout << "gate " << (gate.empty() ? "joint" : gate[1]) << ": largest difference " << worst << "\n";
    EXPECT_LE(worst, 1e-5) << file;
  }
  EXPECT_EQ(model.gate_norm(), ops::FlashArGateNorm::Joint);
}

TEST_F(FlashArTest, GreedyDiagonalDecodingMatchesReference) {
  if (!make_models("greedy")) GTEST_SKIP() << "PyTorch not available";
  const std::string greedy = dir_ + "/greedy.json";
  auto r = testing::run_reference({"flashar-greedy", flashar_, "--label", "2", "--cfg", "2", "--out", greedy});
  ASSERT_TRUE(r.ok) << r.message;
  FlashArModel model(ctx(), flashar_, f32_options());
  const ModelSet set = flashar_set(ctx(), model);
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(2);
  in.sampler.cfg = 2.0f;
  in.sampler.top_k = 1;
  const Generation gen = generate_one("flashar", set, in, true);
  // Decoding order: diagonal by diagonal, as the reference lists its tokens.
  expect_reference_order("flashar", gen, greedy);

  // One step per diagonal, each committing exactly its cells with one forward.
  ASSERT_EQ(gen.events.size(), static_cast<size_t>(2 * kGrid - 1));
  EXPECT_EQ(gen.nfe, 2 * kGrid - 1);
  for (size_t d = 0; d < gen.events.size(); ++d) {
    std::vector<int32_t> want;
    for (const auto& [row, col] : diagonal_cells(kGrid, static_cast<int64_t>(d)))
      want.push_back(static_cast<int32_t>(row * kGrid + col));
    EXPECT_EQ(gen.events[d].accepted, want) << "step " << d;
    EXPECT_EQ(gen.events[d].nfe, static_cast<int64_t>(d + 1));
    // The weight of H each cell took: 1 in row 0 (H alone), 0 in column 0 (V alone), the gate's
    // own elsewhere (and at the corner).
    ASSERT_EQ(gen.events[d].gates.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const int32_t cell = want[i];
      const float g = gen.events[d].gates[i];
      if (cell > 0 && cell < kGrid) {
        EXPECT_EQ(g, 1.0f) << "cell " << cell;
      } else if (cell > 0 && cell % kGrid == 0) {
        EXPECT_EQ(g, 0.0f) << "cell " << cell;
      } else {
        EXPECT_TRUE(g > 0.0f && g < 1.0f) << "cell " << cell;
      }
    }
  }
}

// A text-conditional FlashAR (the released train_t2i_flashar.py's kind): 20 caption positions of
// which a 3-token caption leaves 17 as padding, hidden from every query as LlamaGen hides it, so
// the prefill runs in two chunks of the 17 queries the model is loaded for, into the backbone's
// cache and the branch's. Greedy diagonal decoding matches the reference token for token; two
// captions of different padding in one batch get what each gets alone.
TEST_F(FlashArTest, TextConditionalDecodingMatchesReference) {
  dir_ = testing::scratch_dir("flashar_t2i");
  gpt_ = dir_ + "/gpt.safetensors";
  flashar_ = dir_ + "/flashar.safetensors";
  const std::string caption = dir_ + "/caption.npy", greedy = dir_ + "/greedy.json";
  auto r = testing::run_reference({"make-gpt", gpt_, "--dim", "64", "--layers", "3", "--heads", "2", "--vocab",
                                   std::to_string(kVocab), "--grid", std::to_string(kGrid), "--cls", "20",
                                   "--caption-dim", "8"});
  if (r.skipped) GTEST_SKIP() << "PyTorch not available";
  ASSERT_TRUE(r.ok) << r.message;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"make-flashar", flashar_, "--gpt", gpt_},
        {"make-caption", caption, "--tokens", "3", "--dim", "8"},
        {"flashar-greedy", flashar_, "--caption", caption, "--cfg", "2", "--out", greedy}}) {
    r = testing::run_reference(args);
    ASSERT_TRUE(r.ok) << r.message;
  }
  GptOptions o = f32_options();
  o.batch_rows = 4;
  FlashArModel model(ctx(), flashar_, o);
  ASSERT_EQ(model.config().model_type, ModelType::t2i);
  const ModelSet set = flashar_set(ctx(), model);
  StrategyInputs in;
  in.condition = std::make_shared<CaptionEmbeddings>(CaptionEmbeddings::load(caption));
  in.sampler.cfg = 2.0f;
  in.sampler.top_k = 1;
  const Generation gen = generate_one("flashar", set, in, false);
  expect_reference_order("flashar t2i", gen, greedy);
  EXPECT_EQ(gen.nfe, 2 * kGrid - 1);

  std::vector<StrategyInputs> inputs(2, in);
  std::vector<float> longer(12 * 8);
  for (size_t k = 0; k < longer.size(); ++k) longer[k] = std::cos(0.3f * static_cast<float>(k));
  inputs[1].condition = std::make_shared<CaptionEmbeddings>("longer", 12, 8, longer, std::vector<uint8_t>(12, 1));
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].sampler.top_k = 0;
    inputs[i].seed = 7 + i;
  }
  const std::vector<Generation> together = generate_batch("flashar", set, inputs);
  ASSERT_EQ(together.size(), 2u);
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(together[i].tokens, generate_one("flashar", set, inputs[i], false).tokens) << "image " << i;
}

// A prompt family's FlashAR made by the reference (tools/flashar_janus.py, flashar_lumina.py) on
// a tiny converted model: reference.py make-MAKE, the converter, make-flashar, flashar-greedy with
// the prompt. Returns the FlashAR file, or "" when PyTorch is unavailable.
std::string reference_prompt_flashar(const std::string& dir, const std::vector<std::string>& make,
                                     const std::vector<std::string>& convert, const std::string& prompt, float cfg) {
  auto r = testing::run_reference(make);
  if (r.skipped) return "";
  EXPECT_TRUE(r.ok) << r.message;
  r = testing::run_tool(convert.front(), std::vector<std::string>(convert.begin() + 1, convert.end()));
  EXPECT_TRUE(r.ok) << r.message;
  const std::string flashar = dir + "/flashar.safetensors";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"make-flashar", flashar, "--gpt", dir + "/model.safetensors"},
        {"flashar-greedy", flashar, "--prompt", prompt, "--cfg", std::to_string(cfg), "--out", dir + "/greedy.json"}}) {
    r = testing::run_reference(args);
    EXPECT_TRUE(r.ok) << r.message;
  }
  return flashar;
}

// Greedy diagonal decoding of `flashar` from `prompt` (through the backbone's own tokenizer and
// text table) with CFG matches the reference's greedy.json token for token, in 2W - 1 forwards.
void expect_prompt_decoding_matches(Context& ctx, const std::string& flashar, const std::string& prompt, float cfg,
                                    GptOptions o) {
  FlashArModel model(ctx, flashar, o);
  const ModelSet set = flashar_set(ctx, model);
  StrategyInputs in;
  in.condition = model.backbone().prompt_condition(prompt);
  in.sampler.cfg = cfg;
  in.sampler.top_k = 1;
  const Generation gen = generate_one("flashar", set, in, false);
  expect_reference_order("flashar " + model.config().family, gen,
                         flashar.substr(0, flashar.rfind('/')) + "/greedy.json");
  EXPECT_EQ(gen.nfe, 2 * model.config().grid_size - 1);
}

// Janus-Pro (ours): a tiny converted Janus-Pro with a random branch, a 3-word prompt left-padded
// into 16 positions, CFG 3 on Janus's unconditional prompt.
TEST_F(FlashArTest, JanusDecodingMatchesReference) {
  const std::string dir = testing::scratch_dir("flashar_janus_ref");
  const std::string flashar = reference_prompt_flashar(
      dir,
      {"make-janus", dir + "/hf", "--dim", "64", "--layers", "2", "--heads", "4", "--ffn", "128", "--image-vocab",
       std::to_string(kVocab), "--grid", std::to_string(kGrid), "--dtype", "f32"},
      {"convert_janus.py", dir + "/hf", dir + "/model", "--dtype", "f32", "--prompt-tokens", "16"}, "a red coat", 3.0f);
  if (flashar.empty()) GTEST_SKIP() << "PyTorch not available";
  expect_prompt_decoding_matches(ctx(), flashar, "a red coat", 3.0f, f32_options());
}

// Lumina-mGPT (ours): a tiny converted Lumina-mGPT (4 x 4 codes, a line break after each row)
// with a random branch; the prompt through its template into 40 positions, CFG 4 on the
// unconditional row that keeps only the image start and size tokens. The reference decodes by
// full teacher-forced forwards (flashar_lumina.decode_teacher_forced), with the breaks where the
// engine places them: fed with their row ends, and standing for them as V's source.
TEST_F(FlashArTest, LuminaDecodingMatchesReference) {
  const std::string dir = testing::scratch_dir("flashar_lumina_ref");
  const std::string flashar =
      reference_prompt_flashar(dir,
                               {"make-lumina", dir + "/hf", "--dim", "64", "--layers", "2", "--heads", "4", "--ffn",
                                "128", "--codes", std::to_string(kVocab), "--dtype", "f32", "--scale", "0.4"},
                               {"convert_lumina.py", dir + "/hf", dir + "/model", "--dtype", "f32", "--size",
                                std::to_string(16 * kGrid), "--prompt-tokens", "40"},
                               "a red coat", 4.0f);
  if (flashar.empty()) GTEST_SKIP() << "PyTorch not available";
  expect_prompt_decoding_matches(ctx(), flashar, "a red coat", 4.0f, f32_options());

  // --batch: two prompts of other lengths (other padding, other row-end slots' neighbours) in one
  // forward get, seed for seed, what each gets alone.
  GptOptions o = f32_options();
  o.batch_rows = 4;
  FlashArModel model(ctx(), flashar, o);
  const ModelSet set = flashar_set(ctx(), model);
  std::vector<StrategyInputs> inputs(2);
  const std::vector<std::string> prompts = {"a coat", "two bags"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].condition = model.backbone().prompt_condition(prompts[i]);
    inputs[i].sampler.cfg = 4.0f;
    inputs[i].seed = 11 + i;
  }
  expect_batch_is_alone(set, inputs);
}

// Three images per forward, each at its own class and seed, get the tokens each gets alone
// (categorical sampling, CFG), and each image's events are its own.
TEST_F(FlashArTest, BatchGivesEachImageItsOwnTokens) {
  if (!make_models("batch")) GTEST_SKIP() << "PyTorch not available";
  GptOptions o = f32_options();
  o.batch_rows = 6;
  FlashArModel model(ctx(), flashar_, o);
  const ModelSet set = flashar_set(ctx(), model);
  std::vector<StrategyInputs> inputs(3);
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].condition = std::make_shared<ClassLabel>(static_cast<int64_t>(i) + 1);
    inputs[i].seed = 40 + i;
    inputs[i].sampler.cfg = 2.0f;
  }
  expect_batch_is_alone(set, inputs);
}

TEST_F(FlashArTest, RefusesTheWrongFiles) {
  if (!make_models("refusals")) GTEST_SKIP() << "PyTorch not available";
  // A FlashAR file is not a plain target: its branch would be silently dropped.
  try {
    Gpt plain(ctx(), flashar_);
    ADD_FAILURE() << "a FlashAR file loaded as a plain GPT";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vertical."), std::string::npos) << e.what();
  }
  try {
    FlashArModel wrong(ctx(), gpt_);
    ADD_FAILURE() << "a plain GPT loaded as FlashAR";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("role"), std::string::npos) << e.what();
  }
  Gpt gpt(ctx(), gpt_);
  ModelSet set;
  set.ctx = &ctx();
  set.target = &gpt;
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(1);
  try {
    generate_one("flashar", set, in, false);
    ADD_FAILURE() << "flashar ran without its model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--flashar"), std::string::npos) << e.what();
  }
}

// FlashAR on Janus-Pro, from tiny random files written here: a 2-block Janus (prompts at 5
// positions, 4 x 4 tokens of a 64-token vocabulary) whose FlashAR branch starts at block 1.
constexpr int64_t kJanusPrompt = 5;

testing::TinyGptSpec janus_spec(uint64_t seed) {
  testing::TinyGptSpec t;
  t.layers = 2;
  t.vocab = kVocab;
  t.grid = kGrid;
  t.scale = 0.3f;
  t.seed = seed;
  return t;
}

// The Janus tests' files, in scratch folder flashar_janus_<name>: target.safetensors, a Janus-Pro
// of its own random weights (the model whose text table the user's prompts come through);
// flashar.safetensors, a FlashAR on another random Janus (seed 1: its fine-tuned backbone, text
// table and all) with a random branch; copy.safetensors, the same backbone with the branch a copy
// of its tail.
std::string write_janus_files(const std::string& name) {
  const std::string dir = testing::scratch_dir("flashar_janus_" + name);
  testing::write_tiny_janus(dir + "/target.safetensors", janus_spec(11), kJanusPrompt);
  testing::tiny_janus_flashar_writer(janus_spec(1), {}).write(dir + "/flashar.safetensors");
  testing::TinyJanusFlashAr copy;
  copy.copy_backbone = true;
  testing::tiny_janus_flashar_writer(janus_spec(1), copy).write(dir + "/copy.safetensors");
  return dir;
}

GptOptions janus_options(int64_t batch_rows = 2) {
  GptOptions o;
  o.weights = DType::F32;
  o.kv = DType::F32;
  o.batch_rows = batch_rows;
  o.max_queries = kJanusPrompt + kCells;
  return o;
}

// Both heads' logits of one forward over the prompt and every cell in raster order (CFG rows).
void janus_heads(Context& ctx, FlashArModel& model, const Condition& prompt, std::vector<float>& h,
                 std::vector<float>& v) {
  const GptConfig& cfg = model.config();
  KvCache cache = model.backbone().make_cache();
  KvCache branch = model.make_branch_cache(cache);
  std::vector<uint32_t> tokens;
  for (int64_t i = 0; i < kCells; ++i) tokens.push_back(static_cast<uint32_t>((i * 7 + 3) % kVocab));
  const GptQueries q =
      GptQueries::causal(cfg, 0, cfg.cls_token_num + kCells, tokens, guided_rows(prompt, 2), cache.slots());
  GptBatch batch(ctx, cfg, q, 2, cache.slots());
  CommandStream s(ctx);
  const FlashArOutputs out = model.forward(s, batch, cache, branch);
  Tensor th = ctx.tensor(DType::F32, out.h_logits.shape, "h copy"),
         tv = ctx.tensor(DType::F32, out.v_logits.shape, "v copy");
  s.copy(out.h_logits, th);
  s.copy(out.v_logits, tv);
  s.submit_and_wait();
  h = download_floats(ctx, th);
  v = download_floats(ctx, tv);
}

// The largest difference between a and b over the largest magnitude of a.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(a[i])));
  }
  return worst / std::max(scale, 1e-30);
}

// The vertical head of a Janus-Pro FlashAR is gen_head's MLP (Linear, GELU, Linear, with biases)
// under `vertical.`: with the branch a copy of the backbone's last block, final norm and gen_head,
// V's logits are H's at every position; with a random branch they are not.
TEST_F(FlashArTest, JanusVerticalHeadIsTheFamilyHead) {
  const std::string dir = write_janus_files("head");
  FlashArModel copy(ctx(), dir + "/copy.safetensors", janus_options());
  EXPECT_EQ(copy.config().family, "janus-pro");
  EXPECT_EQ(copy.vertical_start(), 1);
  EXPECT_EQ(copy.vertical_layers(), 1);
  const auto prompt = testing::tiny_janus_prompt(dir + "/copy.safetensors", {3, 7, 1}, "a prompt");
  std::vector<float> h, v;
  janus_heads(ctx(), copy, *prompt, h, v);
  ASSERT_EQ(h.size(), static_cast<size_t>(2 * (kJanusPrompt + kCells) * kVocab));
  ASSERT_EQ(v.size(), h.size());
  EXPECT_LE(relative_difference(h, v), 1e-5);

  FlashArModel random(ctx(), dir + "/flashar.safetensors", janus_options());
  std::vector<float> rh, rv;
  janus_heads(ctx(), random, *prompt, rh, rv);
  EXPECT_LE(relative_difference(h, rh), 1e-5) << "the same backbone gave another H";
  EXPECT_GT(relative_difference(rh, rv), 1e-2) << "a random branch gave H's logits";
}

// A set as the CLI makes it for --method flashar on Janus-Pro: the target (whose table made the
// prompts) and the FlashAR model, whose backbone the strategy decodes with.
ModelSet janus_flashar_set(Context& ctx, Gpt& target, FlashArModel& model) {
  ModelSet set = flashar_set(ctx, model);
  set.target = &target;
  return set;
}

const CaptionEmbeddings& caption_of(const StrategyInputs& in) {
  return dynamic_cast<const CaptionEmbeddings&>(*in.condition);
}

// Diagonal decoding with CFG on a Janus-Pro FlashAR: 2W - 1 forwards, one diagonal each. The
// prompt comes through the target's text table (as the CLI makes it), the backbone reads it
// through its own (fine-tuned) table: the same prompt made from the backbone's table gives the same
// image seed for seed.
TEST_F(FlashArTest, JanusDecodesDiagonalsWithTheBackbonesPromptRows) {
  const std::string dir = write_janus_files("decode");
  Gpt target(ctx(), dir + "/target.safetensors", janus_options());
  FlashArModel model(ctx(), dir + "/flashar.safetensors", janus_options());
  const ModelSet set = janus_flashar_set(ctx(), target, model);
  StrategyInputs in;
  in.condition = testing::tiny_janus_prompt(dir + "/target.safetensors", {3, 7, 1}, "prompt 0");
  in.seed = 5;
  in.sampler.cfg = 3.0f;
  const Generation gen = generate_one("flashar", set, in, true);
  EXPECT_EQ(gen.nfe, 2 * kGrid - 1);
  ASSERT_EQ(gen.events.size(), static_cast<size_t>(2 * kGrid - 1));
  for (size_t d = 0; d < gen.events.size(); ++d) {
    std::vector<int32_t> want;
    for (const auto& [row, col] : diagonal_cells(kGrid, static_cast<int64_t>(d)))
      want.push_back(static_cast<int32_t>(row * kGrid + col));
    EXPECT_EQ(gen.events[d].accepted, want) << "step " << d;
    EXPECT_EQ(gen.events[d].gates.size(), want.size()) << "step " << d;
  }
  for (int32_t t : gen.tokens) EXPECT_TRUE(t >= 0 && t < kVocab) << t;

  StrategyInputs own = in;
  own.condition = testing::tiny_janus_prompt(dir + "/flashar.safetensors", {3, 7, 1}, "prompt 0");
  ASSERT_NE(caption_of(in).values(), caption_of(own).values()) << "the two text tables agree";
  EXPECT_EQ(generate_one("flashar", set, own, false).tokens, gen.tokens);
}

// Three prompts of two lengths (one leaves prompt positions as padding) in one batch with CFG get
// the tokens each gets alone, seed for seed, in 2W - 1 forwards each.
TEST_F(FlashArTest, JanusBatchGivesEachImageItsOwnTokens) {
  const std::string dir = write_janus_files("batch");
  Gpt target(ctx(), dir + "/target.safetensors", janus_options());
  FlashArModel model(ctx(), dir + "/flashar.safetensors", janus_options(6));
  const ModelSet set = janus_flashar_set(ctx(), target, model);
  const std::vector<std::vector<int64_t>> words = {{3, 7, 1}, {9}, {2, 4, 8}};
  std::vector<StrategyInputs> inputs(words.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].condition =
        testing::tiny_janus_prompt(dir + "/target.safetensors", words[i], "prompt " + std::to_string(i));
    inputs[i].seed = 40 + i;
    inputs[i].sampler.cfg = 3.0f;
  }
  expect_batch_is_alone(set, inputs);
}

// The message of the Error loading `path` as a FlashAR model throws, or "" when it loads.
std::string flashar_error(Context& ctx, const std::string& path) {
  try {
    FlashArModel model(ctx, path, janus_options());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_says(const std::string& what, const std::vector<std::string>& parts) {
  EXPECT_FALSE(what.empty()) << "no error";
  for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
}

// A Janus-Pro FlashAR without its vertical head (or with LlamaGen's in its place), one with a
// tensor no branch has, and a Lumina-mGPT file with the gate but no branch are refused, naming
// the file and what is wrong.
TEST_F(FlashArTest, RefusesIncompleteOrStrayBranches) {
  const std::string dir = testing::scratch_dir("flashar_janus_refusals");
  const testing::TinyGptSpec spec = janus_spec(1);
  testing::TinyJanusFlashAr no_head;
  no_head.vertical_head = false;
  const std::string headless = dir + "/headless.safetensors";
  testing::tiny_janus_flashar_writer(spec, no_head).write(headless);
  expect_says(flashar_error(ctx(), headless), {headless, "vertical.gen_head.output_mlp_projector.weight", "missing"});

  SafetensorsWriter llamagen_head = testing::tiny_janus_flashar_writer(spec, no_head);
  llamagen_head.add_f32("vertical.output.weight", {kVocab, spec.dim}, std::vector<float>(kVocab * spec.dim, 0.1f));
  llamagen_head.write(dir + "/llamagen_head.safetensors");
  expect_says(flashar_error(ctx(), dir + "/llamagen_head.safetensors"),
              {"vertical.gen_head.output_mlp_projector.weight", "missing"});

  SafetensorsWriter stray = testing::tiny_janus_flashar_writer(spec, {});
  stray.add_f32("vertical.foo", {2}, {1.0f, 2.0f});
  stray.write(dir + "/stray.safetensors");
  expect_says(flashar_error(ctx(), dir + "/stray.safetensors"),
              {dir + "/stray.safetensors", "vertical.foo", "not part of a FlashAR branch"});

  testing::TinyGptSpec lumina_spec = spec;
  lumina_spec.heads = 4;
  SafetensorsWriter lumina =
      synthetic_lumina(testing::tiny_lumina_shape(lumina_spec, 4), testing::tiny_janus_fill(1, 0.2f), StDType::F32);
  testing::TinyNormal rng(6);
  testing::add_tiny_flashar_gate(lumina, lumina_spec, rng);
  const std::string lumina_path = dir + "/lumina.safetensors";
  lumina.write(lumina_path);
  expect_says(flashar_error(ctx(), lumina_path), {lumina_path, "vertical.layers.0.attention_norm.weight", "missing"});
}

// The front ends' check (frontend::load_models, what `vkspec generate --method flashar` runs): a
// Janus-Pro FlashAR is refused with a LlamaGen target and with a Janus-Pro target of other prompt
// positions, the message saying what differs, and loads with a Janus-Pro target of its shape.
TEST_F(FlashArTest, JanusFlashArMustFitTheTarget) {
  const std::string dir = write_janus_files("fits");
  testing::TinyGptSpec llamagen = janus_spec(3);
  llamagen.classes = 5;
  testing::write_tiny_gpt(dir + "/llamagen.safetensors", llamagen);
  testing::write_tiny_janus(dir + "/janus6.safetensors", janus_spec(4), kJanusPrompt + 1);
  const auto load = [&](const std::string& target) -> std::string {
    frontend::ModelFiles files;
    files.target = dir + "/" + target;
    files.flashar = dir + "/flashar.safetensors";
    frontend::ModelRequest request;
    request.needs.flashar = true;
    try {
      const frontend::LoadedModels m = frontend::load_models(ctx(), frontend::ModelCatalog(files), request);
      EXPECT_TRUE(m.flashar != nullptr);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  expect_says(load("llamagen.safetensors"),
              {"was not post-trained from the target", "family janus-pro, the target's llamagen-c2i",
               "condition 5 prompt positions, text vocabulary 16, the target's 5 classes"});
  const std::string positions = load("janus6.safetensors");
  expect_says(positions, {"condition 5 prompt positions, text vocabulary 16, the target's 6 prompt positions"});
  EXPECT_EQ(positions.find("family"), std::string::npos) << positions;
  EXPECT_EQ(load("target.safetensors"), "");
}

}  // namespace
}  // namespace vkspec
