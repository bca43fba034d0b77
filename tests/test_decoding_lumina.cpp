// Every decoding method on the Lumina-mGPT family (engine/families/lumina_family.cpp): tiny random
// Lumina models (q/k LayerNorm, 1D RoPE, a line break placed after every row of the 4 x 4 grid,
// vocabulary 8) with a Lumina drafter close to the target, random draft heads, latent heads and an
// EAGLE drafter (on the grid alone, the target's states as features); prompts of two lengths (one leaves condition
// positions as padding), each with its own unconditional row (the image start and sizes alone). Checked: how a
// forward's queries are placed (engine/model/line_breaks.h: the break after each row end, device slots in the released
// order, what each query sees, scratch slots' breaks, a ragged batch's padding); every method generates with consistent
// events, or names what it lacks; images decoded three per forward are each the image decoded alone; MuLo-SD at tau 1
// is ar token for token. (Losslessness: exact_law_lumina.* in test_exact_law.cpp.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "decoding/generation.h"
#include "decoding/strategy.h"
#include "engine/model/line_breaks.h"
#include "engine/model/tokenizer.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

constexpr int64_t kPromptPositions = 8, kGrid = 4;

struct LuminaModels : testing::TinyModels {
  std::unique_ptr<Gpt> batched;
};

testing::TinyGptSpec lumina_spec() {
  testing::TinyGptSpec t;
  t.vocab = testing::kTinyVocab;
  t.grid = kGrid;
  t.scale = 0.3f;
  return t;
}

LuminaModels& lumina_models(Context& ctx) {
  static LuminaModels m = [&] {
    const std::string dir = testing::scratch_dir("lumina_models");
    const testing::TinyGptSpec t = lumina_spec();
    testing::TinyGptSpec d = t;
    d.noise_seed = 2;
    d.noise_scale = 0.03f;
    testing::write_tiny_lumina(dir + "/target.safetensors", t, kPromptPositions);
    testing::write_tiny_lumina(dir + "/drafter.safetensors", d, kPromptPositions);
    LuminaModels r;
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
    testing::add_tiny_companions(ctx, r, t, "lumina-mgpt");
    return r;
  }();
  return m;
}

// Two prompts: 3 and 1 text tokens between BOS and the separator (8 and 6 condition rows).
std::shared_ptr<const Condition> prompt(int i) {
  static const std::vector<std::shared_ptr<const Condition>> prompts = [] {
    const std::string model = testing::scratch_dir("lumina_models") + "/target.safetensors";
    return std::vector<std::shared_ptr<const Condition>>{testing::tiny_lumina_prompt(model, {30, 70, 10}, "prompt 0"),
                                                         testing::tiny_lumina_prompt(model, {90}, "prompt 1")};
  }();
  return prompts[static_cast<size_t>(i % 2)];
}

class decoding_lumina : public testing::VulkanTest {
 protected:
  void SetUp() override {
    testing::VulkanTest::SetUp();
    lumina_models(ctx());
  }
  testing::Sample run(const std::string& method, const MethodOptions& o, uint64_t first_seed, int images,
                      const ModelSet* set = nullptr) {
    return testing::run_images(ctx(), testing::by_name(method), o, first_seed, images, true,
                               set ? set : &lumina_models(ctx()).set, prompt);
  }
};

// Placement of a forward's queries on the tiny target (cls 8, 4 x 4; device slots: the grid's in
// the released order, 20 of them, then scratch in pairs, then the padding slot).
TEST_F(decoding_lumina, BreaksArePlacedAfterRowEnds) {
  const GptConfig& cfg = lumina_models(ctx()).target->config();
  const int64_t cls = cfg.cls_token_num;
  KvCache cache = lumina_models(ctx()).target->make_cache(4);
  const LineBreakLayout layout(cfg, cache.slots());
  EXPECT_EQ(cache.device_slots(), cls + 4 * 5 + 2 * 4 + 1);
  EXPECT_EQ(layout.device_slot(cls + 5), cls + 6);  // row 1, column 1: after row 0's break
  EXPECT_EQ(layout.device_slot(cfg.seq_len() + 1), cls + 20 + 2);
  const std::vector<const Condition*> rows = {prompt(0).get(), prompt(0)->null_form()};
  // Image tokens 2..5 in one causal window: token 3 ends row 0, so a break follows it.
  const GptQueries q = GptQueries::causal(cfg, cls + 2, 4, {1, 2, 3, 4}, rows, cache.slots());
  const PlacedQueries p = place_line_breaks(cfg, q, 2, cache);
  ASSERT_EQ(p.queries.count(), 5);
  EXPECT_EQ(p.queries.slots, (std::vector<uint32_t>{static_cast<uint32_t>(cls + 2), static_cast<uint32_t>(cls + 3),
                                                    static_cast<uint32_t>(cls + 4), static_cast<uint32_t>(cls + 5),
                                                    static_cast<uint32_t>(cls + 6)}));
  EXPECT_EQ(p.queries.rope_index, (std::vector<int64_t>{cls + 2, cls + 3, cls + 4, cls + 5, cls + 6}));
  EXPECT_EQ(p.queries.tokens[2], static_cast<uint32_t>(cfg.placed_id()));
  const auto seen = ops::AttentionMaskBuilder::unpack(p.queries.mask, cache.device_slots());
  EXPECT_FALSE(seen.sees(1, cls + 4)) << "the row end sees its own break";
  EXPECT_TRUE(seen.sees(2, cls + 4) && seen.sees(2, cls + 3)) << "the break sees itself and its row end";
  EXPECT_TRUE(seen.sees(3, cls + 4)) << "the next row's first token sees the break";
  // The method's rows read: the break's state for the row end (row 1 of the method's queries).
  bool row_end_reads_break = false;
  for (const PlacedQueries::Run& r : p.rows)
    if (r.to <= 1 && 1 < r.to + r.count) row_end_reads_break = r.from + (1 - r.to) == 2;
  EXPECT_TRUE(row_end_reads_break);
}

// A row end written to a scratch slot gets its break in the slot after it; a later query that
// sees that scratch slot sees the break, and one that sees a scratch slot holding a token in
// mid-row does not see a break there.
TEST_F(decoding_lumina, ScratchRowEndsKeepTheirBreaks) {
  const GptConfig& cfg = lumina_models(ctx()).target->config();
  const int64_t cls = cfg.cls_token_num, S = cfg.seq_len();
  KvCache cache = lumina_models(ctx()).target->make_cache(4);
  const LineBreakLayout layout(cfg, cache.slots());
  const std::vector<const Condition*> rows = {prompt(0).get(), prompt(0)->null_form()};
  // Positions cls + 3 (row end) and cls + 2 (mid-row) drafted into scratch slots S and S + 1.
  GptQueries q = GptQueries::at_positions(cfg, {cls + 3, cls + 2}, {1, 2}, rows, cache.slots(),
                                          [](int64_t, int64_t) { return false; });
  q.slots = {static_cast<uint32_t>(S), static_cast<uint32_t>(S + 1)};
  const PlacedQueries first = place_line_breaks(cfg, q, 2, cache);
  ASSERT_EQ(first.queries.count(), 3);
  EXPECT_EQ(first.queries.slots[1], static_cast<uint32_t>(layout.device_slot(S) + 1));
  EXPECT_EQ(cache.scratch_position(0, S), cls + 3);
  // A later query seeing both scratch slots sees S's break only.
  GptQueries later =
      GptQueries::at_positions(cfg, {cls + 4}, {3}, rows, cache.slots(), [](int64_t, int64_t) { return false; });
  ops::AttentionMaskBuilder mb(1, cache.slots());
  mb.see(0, cls + 4);
  mb.see(0, S);
  mb.see(0, S + 1);
  later.mask = mb.pack();
  const PlacedQueries second = place_line_breaks(cfg, later, 2, cache);
  const auto seen = ops::AttentionMaskBuilder::unpack(second.queries.mask, cache.device_slots());
  EXPECT_TRUE(seen.sees(0, layout.device_slot(S) + 1));
  EXPECT_FALSE(seen.sees(0, layout.device_slot(S + 1) + 1));
  // A sequence slot written at another position breaks the layout's premise: refused.
  GptQueries wrong = later;
  wrong.slots = {static_cast<uint32_t>(cls + 5)};
  EXPECT_THROW(place_line_breaks(cfg, wrong, 2, cache), Error);
}

TEST_F(decoding_lumina, EveryMethodGeneratesFromAPromptOrNamesWhatItNeeds) {
  for (const std::string& method : strategy_names()) {
    SCOPED_TRACE(method);
    const StrategyNeeds n = find_strategy(method).needs_for({});
    const MethodOptions options = method == "sjd-pac" ? MethodOptions{{"window", "16"}} : MethodOptions{};
    // MuLo-SD's models are not in this set (MuloAtTauOneIsAr has them), nor a FlashAR model
    // (FlashArTest.LuminaDecodingMatchesReference decodes one).
    if (n.low_res || n.flashar) {
      try {
        run(method, options, 5, 1);
        ADD_FAILURE() << method << " ran without the model it needs";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(n.low_res ? "low-res" : "--flashar"), std::string::npos)
            << method << ": " << e.what();
      }
      continue;
    }
    const testing::Sample s = run(method, options, 5, 4);
    ASSERT_EQ(s.grids.size(), 4u);
    for (const auto& g : s.grids) {
      ASSERT_EQ(g.size(), static_cast<size_t>(kGrid * kGrid));
      for (int32_t t : g) EXPECT_TRUE(t >= 0 && t < testing::kTinyVocab);
    }
  }
}

// Three images per forward (ragged batches, prompts of two lengths, continuous batching) give each
// image the tokens it gets alone: the padding queries of the placed batches change nothing.
TEST_F(decoding_lumina, BatchesGiveEachImageItsTokensAlone) {
  LuminaModels& m = lumina_models(ctx());
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

// MuLo-SD with a 2 x 2 Lumina drafting for a 4 x 4 one (its own size tokens in the prompt,
// Gpt::own_condition), vocabulary 1024 for the shipped VQ's pixel upsampling: at tau 1 every draft
// is rejected, so it is ar token for token; at a small tau it runs to a whole grid.
TEST_F(decoding_lumina, MuloAtTauOneIsAr) {
  static const struct Pair {
    std::unique_ptr<Gpt> target, low;
    std::unique_ptr<Tokenizer> vq;
    std::unique_ptr<CodebookNeighbours> neighbours;
    std::shared_ptr<const Condition> prompt;
  } pair = [&] {
    const std::string dir = testing::scratch_dir("lumina_mulo_models");
    testing::TinyGptSpec t = lumina_spec(), low = t;
    t.vocab = low.vocab = 1024;
    low.grid = kGrid / 2;
    low.seed = 7;
    testing::write_tiny_lumina(dir + "/target.safetensors", t, kPromptPositions);
    testing::write_tiny_lumina(dir + "/low.safetensors", low, kPromptPositions);
    GptOptions opt;
    opt.weights = DType::F32;
    Pair p;
    p.target = std::make_unique<Gpt>(ctx(), dir + "/target.safetensors", opt);
    p.low = std::make_unique<Gpt>(ctx(), dir + "/low.safetensors", opt);
    p.vq = load_tokenizer(ctx(), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors", DType::F32, 1, kGrid);
    p.neighbours = std::make_unique<CodebookNeighbours>(ctx(), *p.vq, 16);
    p.prompt = testing::tiny_lumina_prompt(dir + "/target.safetensors", {30, 70, 10}, "a prompt");
    return p;
  }();
  ModelSet m;
  m.ctx = &ctx();
  m.target = pair.target.get();
  m.low_res = pair.low.get();
  m.tokenizer = pair.vq.get();
  m.neighbours.add(pair.neighbours.get());
  for (uint64_t seed : {1u, 2u}) {
    StrategyInputs in;
    in.condition = pair.prompt;
    in.seed = seed;
    in.sampler = testing::tiny_settings();
    const Generation ar = generate_one("ar", m, in, false);
    in.options = {{"tau", "1"}, {"radius", "0"}};
    EXPECT_EQ(generate_one("mulo", m, in, false).tokens, ar.tokens) << seed;
  }
  StrategyInputs in;  // and with drafts accepted, islands crossing the breaks
  in.condition = pair.prompt;
  in.seed = 5;
  in.sampler = testing::tiny_settings();
  in.options = {{"tau", "0.012"}, {"k", "16"}};
  EXPECT_EQ(generate_one("mulo", m, in, false).tokens.size(), static_cast<size_t>(kGrid * kGrid));
}

}  // namespace
}  // namespace vkspec
