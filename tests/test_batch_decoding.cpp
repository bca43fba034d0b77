// Batched decoding (decoding/batch_strategy.h) on the shipped 8x8 model: images decoded together
// get the tokens each gets alone, seed for seed, with and without CFG, across the row counts where
// the matmul kernels change their row blocking (batch 5 with CFG: 10 rows, past the 8-row GEMV), and
// with several forwards per submit; the window methods (also drafted by the heads) and sjd-pac
// likewise, in lockstep and with continuous batching; a batch of a method without a batch factory, or of images that
// disagree on their settings, is refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "decoding/batch_strategy.h"
#include "decoding/generation.h"
#include "engine/checks/op_check.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/draft_heads.h"
#include "engine/model/eagle_drafter.h"
#include "engine/model/tokenizer.h"
#include "engine/ops/attention_mask.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec::testing {
namespace {

// The logits of `step` after a forward of `pre` (its prefill), both against `cache`.
std::vector<float> logits_after(Context& ctx, Gpt& gpt, const GptBatch& pre, const GptBatch& step,
                                const KvCache& cache) {
  CommandStream s(ctx);
  gpt.forward(s, pre, cache);
  const GptOutputs out = gpt.forward(s, step, cache);
  Tensor logits = ctx.tensor(DType::F32, out.logits.shape, "logits copy");
  s.copy(out.logits, logits);
  s.submit_and_wait();
  return download_floats(ctx, logits);
}

class BatchDecoding : public VulkanTest {
 protected:
  static constexpr int64_t kMostImages = 5;

  ModelSet models() {
    static std::unique_ptr<Gpt> target;
    if (!target) {
      GptOptions opt;
      opt.batch_rows = 2 * kMostImages;
      opt.max_queries = 24;  // zipar: a query per row of the 8x8 grid and a repair; the EAGLE trees below
      target = std::make_unique<Gpt>(ctx(), VKSPEC_ASSETS_DIR "/fmnist_gpt8.safetensors", opt);
    }
    // Random draft heads (the shipped ones are the 16x16 model's), for --init heads, sized for every
    // lane's rows of a forward.
    const GptConfig& cfg = target->config();
    TinyGptSpec spec;  // the target's sizes, for the companions written below
    spec.dim = cfg.dim;
    spec.heads = cfg.n_head;
    spec.ffn_hidden = cfg.ffn_hidden;
    spec.vocab = cfg.vocab_size;
    spec.grid = cfg.grid_size;
    static std::unique_ptr<DraftHeads> heads;
    if (!heads) {
      const std::string path = scratch_dir("batch_decoding") + "/heads.safetensors";
      write_tiny_heads(path, spec, 0.02f, 11);
      heads = std::make_unique<DraftHeads>(ctx(), path, *target, 2 * kMostImages * 8);
    }
    // A random EAGLE drafter on the target's embeddings, output head and features (its fc starts
    // near the identity on the features, so its guesses are often the target's), and the shipped
    // tokenizer's codebook (vvs's dynamic schedule) with its neighbour table (the relaxed rules).
    static std::unique_ptr<EagleDrafter> eagle;
    static std::unique_ptr<Tokenizer> tokenizer;
    static std::unique_ptr<CodebookNeighbours> neighbours;
    if (!eagle) {
      const std::string path = scratch_dir("batch_decoding") + "/eagle.safetensors";
      write_tiny_eagle_drafter(path, spec, 0.02f, 12);
      eagle = std::make_unique<EagleDrafter>(ctx(), path, *target);
      tokenizer = load_tokenizer(ctx(), VKSPEC_ASSETS_DIR "/fmnist_vq.safetensors", DType::F32, 1, cfg.grid_size);
      neighbours = std::make_unique<CodebookNeighbours>(ctx(), *tokenizer, 32);
    }
    ModelSet m;
    m.ctx = &ctx();
    m.target = target.get();
    m.heads = heads.get();
    m.eagle = eagle.get();
    m.tokenizer = tokenizer.get();
    m.neighbours.add(neighbours.get());
    return m;
  }

  std::vector<StrategyInputs> inputs(int n, float cfg, const MethodOptions& options = {}) {
    std::vector<StrategyInputs> in;
    for (int i = 0; i < n; ++i) {
      StrategyInputs s;
      s.condition = std::make_shared<ClassLabel>((3 * i + 1) % 10);
      s.seed = 1000 + static_cast<uint64_t>(7 * i);
      s.sampler = SamplerSettings::from_defaults(models().target->config().defaults);
      s.sampler.cfg = cfg;
      s.options = options;
      in.push_back(s);
    }
    return in;
  }

  // lanes: images per forward (0: all). Returns the batch's generations.
  std::vector<Generation> expect_alone_equals_batched(const std::vector<StrategyInputs>& in,
                                                      const std::string& method = "ar", int64_t lanes = 0) {
    const std::vector<Generation> batched = generate_batch(method, models(), in, true, {}, lanes);
    EXPECT_EQ(batched.size(), in.size());
    for (size_t i = 0; i < std::min(in.size(), batched.size()); ++i) {
      const Generation alone = generate_one(method, models(), in[i], true);
      EXPECT_EQ(batched[i].tokens, alone.tokens) << method << " image " << i << " (seed " << in[i].seed << ")";
      EXPECT_EQ(batched[i].seed, in[i].seed);
      EXPECT_EQ(batched[i].nfe, alone.nfe) << method << " image " << i;
      EXPECT_EQ(batched[i].head_forwards, alone.head_forwards) << method << " image " << i;
      EXPECT_EQ(batched[i].draft_forwards, alone.draft_forwards) << method << " image " << i;
      EXPECT_EQ(batched[i].events.size(), alone.events.size()) << method << " image " << i;
      for (size_t s = 0; s < std::min(alone.events.size(), batched[i].events.size());
           ++s)  // the drafts each step verified
        EXPECT_EQ(batched[i].events[s].proposed_tokens, alone.events[s].proposed_tokens)
            << method << " image " << i << " step " << s;
      EXPECT_EQ(batched[i].batch, lanes ? lanes : static_cast<int64_t>(in.size()));
    }
    return batched;
  }
};

// The forwards themselves: an image's logits bit for bit the same beside 4 other images as alone,
// over two steps (the second attends to the first's keys), so the tokens below are equal by
// construction, not by the luck of the draws.
TEST_F(BatchDecoding, AnImagesLogitsDoNotDependOnTheImagesBesideIt) {
  Gpt& gpt = *models().target;
  const GptConfig& cfg = gpt.config();
  const int64_t G = kMostImages;
  std::vector<std::unique_ptr<ClassLabel>> labels;
  std::vector<const Condition*> rows(static_cast<size_t>(2 * G), nullptr);
  for (int64_t g = 0; g < G; ++g) {
    labels.push_back(std::make_unique<ClassLabel>((2 * g + 3) % 10));
    rows[static_cast<size_t>(g)] = labels.back().get();
  }
  const std::vector<uint32_t> tokens = {17, 900, 3, 511, 64};  // token 0 of each image
  // Logits of both steps for rows `conditions` of images `first` .. first + images - 1.
  auto run = [&](int64_t first, int64_t images) {
    std::vector<const Condition*> conditions;
    for (int64_t g = 0; g < images; ++g) conditions.push_back(rows[static_cast<size_t>(first + g)]);
    conditions.resize(static_cast<size_t>(2 * images), nullptr);
    const KvCache cache = gpt.make_cache(0, 2 * images);
    std::vector<std::vector<float>> steps;
    for (int64_t n = 0; n < 2; ++n) {
      std::vector<uint32_t> fed;
      if (n == 1) fed.assign(tokens.begin() + first, tokens.begin() + first + images);
      const GptBatch b(ctx(), cfg,
                       GptQueries::causal(cfg, cfg.cls_token_num - 1 + n, 1, fed, conditions, cache.slots(), images),
                       2 * images, cache.slots());
      CommandStream s(ctx());
      const GptOutputs out = gpt.forward(s, b, cache);
      Tensor logits = ctx().tensor(DType::F32, out.logits.shape, "logits copy");
      s.copy(out.logits, logits);
      s.submit_and_wait();
      steps.push_back(download_floats(ctx(), logits));
    }
    return steps;
  };
  const std::vector<std::vector<float>> together = run(0, G);
  const size_t V = static_cast<size_t>(cfg.vocab_size);
  for (int64_t g = 0; g < G; ++g) {
    const std::vector<std::vector<float>> alone = run(g, 1);
    for (size_t n = 0; n < 2; ++n)
      for (int64_t half = 0; half < 2; ++half) {  // the conditional row, then the null row
        const float* a = alone[n].data() + half * V;
        const float* t = together[n].data() + (half * G + g) * V;
        EXPECT_EQ(std::memcmp(a, t, V * sizeof(float)), 0) << "image " << g << " step " << n << " row " << half;
      }
  }
}

// A padded lane: an image's window of 3 queries in a cache without scratch slots, against the same
// window padded to 9 queries beside another image's 9 in a cache with 12 scratch slots (the
// padding at scratch slots, seeing only the prefix), both planned for 9 queries per row as a
// window method plans its forwards (GptBatch::set_plan_queries): the image's logits are the same
// bits. With the GPU kernels (CTest batch_decoding.gpu_kernels) this needs the matmul kernel
// chosen for the plan rather than the rows run, and attention's chunks cut for the sequence's
// slots rather than the cache's.
TEST_F(BatchDecoding, PaddedImagesGetTheLogitsTheyGetAlone) {
  // The 16x16 model: 257 slots are enough for its split to stop at the device's workgroup target.
  GptOptions opt;
  opt.batch_rows = 4;
  opt.max_queries = 24;
  Gpt gpt(ctx(), VKSPEC_ASSETS_DIR "/fmnist_gpt16.safetensors", opt);
  const GptConfig& cfg = gpt.config();
  const int64_t plan = 9, prefix = 20, real = 3, seq = cfg.seq_len();
  const ClassLabel first(2), second(7);
  auto tokens_of = [](int64_t g, int64_t from, int64_t n) {
    std::vector<uint32_t> t;
    for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<uint32_t>((131 * g + 17 * (from + i) + 9) % 1024));
    return t;
  };
  // Image g's window: `n` queries from position prefix + 1, causal over the prefix and the window;
  // `pad` more at scratch slots seeing the prefix alone.
  auto window = [&](int64_t g, int64_t n, int64_t pad, int64_t slots) {
    GptQueries q;
    ops::AttentionMaskBuilder mb(n + pad, slots);
    for (int64_t i = 0; i < n + pad; ++i) {
      const bool padding = i >= n;
      const int64_t position = padding ? prefix : prefix + 1 + i;
      q.positions.push_back(position);
      q.slots.push_back(static_cast<uint32_t>(padding ? seq + (i - n) : position));
      mb.see_prefix(i, padding ? prefix + 1 : position + 1);
      if (padding) mb.see(i, seq + (i - n));
    }
    q.tokens = tokens_of(g, prefix, n);
    q.tokens.resize(static_cast<size_t>(n + pad), 0);
    q.mask = mb.pack();
    q.conditions = {g == 0 ? &first : &second, nullptr};
    return q;
  };
  auto run = [&](int64_t images) {
    std::vector<const Condition*> conditions = {&first, &second};
    conditions.resize(static_cast<size_t>(images));
    conditions.resize(static_cast<size_t>(2 * images), nullptr);
    const KvCache cache = gpt.make_cache(images == 1 ? 0 : 12, 2 * images);
    std::vector<uint32_t> fed;
    for (int64_t g = 0; g < images; ++g) {
      const std::vector<uint32_t> t = tokens_of(g, 0, prefix);
      fed.insert(fed.end(), t.begin(), t.end());
    }
    const GptBatch pre(ctx(), cfg, GptQueries::causal(cfg, 0, prefix + 1, fed, conditions, cache.slots(), images),
                       2 * images, cache.slots());
    GptBatch step(ctx(), cfg,
                  images == 1 ? window(0, real, 0, cache.slots())
                              : GptQueries::ragged({window(0, real, plan - real, cache.slots()),
                                                    window(1, plan, 0, cache.slots())}),
                  2 * images, cache.slots());
    step.set_plan_queries(plan);
    return logits_after(ctx(), gpt, pre, step, cache);
  };
  const std::vector<float> alone = run(1), together = run(2);
  const size_t V = static_cast<size_t>(cfg.vocab_size), T = static_cast<size_t>(plan);
  for (size_t half = 0; half < 2; ++half)  // image 0's conditional row, then its null row
    EXPECT_EQ(std::memcmp(alone.data() + half * real * V, together.data() + half * 2 * T * V, real * V * sizeof(float)),
              0)
        << (half ? "null row" : "conditional row");
}

// A ragged forward: three images, each at positions, slots and a mask of its own (a window of
// 4 queries starting at a different token, one with a non-causal mask bit pattern), give each
// image's logits bit for bit as its own forward does.
TEST_F(BatchDecoding, RaggedImagesGetTheLogitsTheyGetAlone) {
  Gpt& gpt = *models().target;
  const GptConfig& cfg = gpt.config();
  const int64_t G = 3, T = 4, prefix = 8;
  std::vector<std::unique_ptr<ClassLabel>> labels;
  for (int64_t g = 0; g < G; ++g) labels.push_back(std::make_unique<ClassLabel>((4 * g + 1) % 10));
  auto tokens_of = [](int64_t g, int64_t first, int64_t n) {
    std::vector<uint32_t> t;
    for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<uint32_t>((97 * g + 31 * (first + i) + 5) % 1024));
    return t;
  };
  // Image g's window: queries at positions start .. start + T - 1 (start = 1 + 2g), each seeing
  // the prefix and itself, and (image 1) the window's first query but not the others.
  auto window = [&](int64_t g, int64_t slots) {
    const int64_t start = 1 + 2 * g;
    std::vector<int64_t> positions;
    for (int64_t i = 0; i < T; ++i) positions.push_back(start + i);
    GptQueries q =
        GptQueries::at_positions(cfg, positions, tokens_of(g, start - 1, T),
                                 {labels[static_cast<size_t>(g)].get(), nullptr}, slots,
                                 [&](int64_t i, int64_t s) { return s < start || (g == 1 && s == start && i > 0); });
    return q;
  };
  // Both steps for `images` images from image `first`: a lockstep prefill of `prefix` positions,
  // then the windows (ragged when several), returning the windows' logits.
  auto run = [&](int64_t first, int64_t images) {
    std::vector<const Condition*> conditions;
    for (int64_t g = 0; g < images; ++g) conditions.push_back(labels[static_cast<size_t>(first + g)].get());
    conditions.resize(static_cast<size_t>(2 * images), nullptr);
    const KvCache cache = gpt.make_cache(0, 2 * images);
    std::vector<uint32_t> fed;
    for (int64_t g = 0; g < images; ++g) {
      const std::vector<uint32_t> t = tokens_of(first + g, 0, prefix - 1);
      fed.insert(fed.end(), t.begin(), t.end());
    }
    const GptBatch pre(ctx(), cfg, GptQueries::causal(cfg, 0, prefix, fed, conditions, cache.slots(), images),
                       2 * images, cache.slots());
    std::vector<GptQueries> windows;
    for (int64_t g = 0; g < images; ++g) windows.push_back(window(first + g, cache.slots()));
    const GptBatch step(ctx(), cfg, images == 1 ? windows[0] : GptQueries::ragged(windows), 2 * images, cache.slots());
    return logits_after(ctx(), gpt, pre, step, cache);
  };
  const std::vector<float> together = run(0, G);
  const size_t V = static_cast<size_t>(cfg.vocab_size), TV = static_cast<size_t>(T) * V;
  for (int64_t g = 0; g < G; ++g) {
    const std::vector<float> alone = run(g, 1);
    for (int64_t half = 0; half < 2; ++half)
      EXPECT_EQ(std::memcmp(alone.data() + half * TV, together.data() + (half * G + g) * TV, TV * sizeof(float)), 0)
          << "image " << g << (half ? " null row" : " conditional row");
  }
  // Images that disagree on their query count cannot share a forward.
  std::vector<GptQueries> uneven = {window(0, 300), window(1, 300)};
  uneven[1].positions.pop_back();
  EXPECT_THROW(GptQueries::ragged(uneven), Error);
}

TEST_F(BatchDecoding, ArImagesTogetherEqualImagesAloneWithCfg) { expect_alone_equals_batched(inputs(5, 4.0f)); }

TEST_F(BatchDecoding, ArImagesTogetherEqualImagesAloneWithoutCfg) { expect_alone_equals_batched(inputs(3, 1.0f)); }

TEST_F(BatchDecoding, ArSeveralForwardsPerSubmitInABatch) {
  expect_alone_equals_batched(inputs(2, 4.0f, {{"tokens-per-submit", "5"}}));
}

// The window methods (and lantern's Jacobi drafts): each image's window verified in one ragged
// forward with the others', under its own seed and step count (per-row keys), gives the tokens and
// forwards it gets alone.
TEST_F(BatchDecoding, WindowMethodsTogetherEqualImagesAlone) {
  for (const char* method : {"sjd", "scd-mc", "scd-gs"})
    expect_alone_equals_batched(inputs(3, 4.0f, {{"window", "6"}}), method);
  expect_alone_equals_batched(inputs(2, 1.0f, {{"window", "3"}, {"init", "random"}}), "sjd");
  // Partial coupling: the independent drafts and coins are keyed per image too.
  expect_alone_equals_batched(inputs(3, 4.0f, {{"window", "5"}, {"alpha", "0.5"}, {"init", "left"}}), "scd-mc");
  // lantern's Jacobi drafts are a window method's, under LANTERN's rule.
  expect_alone_equals_batched(inputs(3, 4.0f, {{"window", "6"}}), "lantern", 2);
}

// --init heads: the draft heads run on every lane's window rows in one call, each lane's proposals
// under its own seed and step count: each image's drafts, tokens, forwards and head forwards are
// those it gets alone, with CFG and continuous batching, and without CFG in lockstep.
TEST_F(BatchDecoding, WindowMethodsDraftedByHeadsTogetherEqualImagesAlone) {
  const MethodOptions heads = {{"window", "6"}, {"init", "heads"}};
  for (const Generation& g : expect_alone_equals_batched(inputs(3, 4.0f, heads), "scd-mc", 2))
    EXPECT_GT(g.head_forwards, 0);
  expect_alone_equals_batched(inputs(2, 1.0f, heads), "sjd");
}

// sjd-pac: every image's candidate tree (tree attention over scratch slots, repairs of accepted
// alternates) verified in one ragged forward beside the others', all trees' multi-draft tests in one
// dispatch under per-row keys, with and without CFG, under both --path rules and with continuous
// batching: the tokens and forwards each image gets alone. Small trees: the model runs 8 queries.
TEST_F(BatchDecoding, SjdPacTreesTogetherEqualImagesAlone) {
  const MethodOptions small = {{"width", "2"}, {"depth", "2"}, {"window", "7"}};
  expect_alone_equals_batched(inputs(3, 4.0f, small), "sjd-pac");
  MethodOptions longest = small;
  longest["path"] = "longest";
  longest["init"] = "above";
  expect_alone_equals_batched(inputs(2, 1.0f, longest), "sjd-pac");
  expect_alone_equals_batched(inputs(3, 4.0f, small), "sjd-pac", 2);
}

// zipar: every lane's active rows (and a placeholder's repair) fed at their own positions in one
// ragged forward, their tokens drawn under each image's seed: the tokens, step events and forwards
// each image gets alone, with CFG and continuous batching (lanes whose row counts differ) and
// without CFG in lockstep.
TEST_F(BatchDecoding, ZipArRowsTogetherEqualImagesAlone) {
  expect_alone_equals_batched(inputs(3, 4.0f, {{"window", "2"}}), "zipar", 2);
  expect_alone_equals_batched(inputs(2, 1.0f, {{"window", "3"}}), "zipar");
}

// The EAGLE family: every lane's drafter (catch-up, levels grown and cut on the device, in its own
// cache), every lane's tree verified in one ragged forward (the cut writing the lane's rows of the
// batch), each lane's tests under its image's keys; relaxed rules and vvs's candidate skips read
// their trees back before the forward, a skipped round sits the forward out. The tokens, events,
// target and drafter forwards each image gets alone, with and without CFG, in lockstep and with
// continuous batching. Small trees: the model runs 24 queries.
TEST_F(BatchDecoding, EagleFamilyTreesTogetherEqualImagesAlone) {
  const MethodOptions small = {{"depth", "4"}, {"topk", "4"}, {"nodes", "10"}};
  expect_alone_equals_batched(inputs(3, 4.0f, small), "eagle");
  expect_alone_equals_batched(inputs(4, 4.0f, small), "eagle", 2);
  expect_alone_equals_batched(
      inputs(2, 1.0f, {{"tree", "static"}, {"candidates", "sampled"}, {"depth", "3"}, {"topk", "3"}, {"nodes", "8"}}),
      "eagle");
  MethodOptions adaptive = small;
  adaptive["max-depth"] = "6";
  expect_alone_equals_batched(inputs(3, 4.0f, adaptive), "adaptive-tree", 2);
  MethodOptions lantern = small;
  lantern["drafter"] = "eagle";
  expect_alone_equals_batched(inputs(2, 4.0f, lantern), "lantern");
  expect_alone_equals_batched(inputs(3, 4.0f, {{"nodes", "8"}, {"shape", "cost"}, {"depth", "3"}, {"topk", "3"}}),
                              "lantern++", 2);
}

// vvs: rounds skipped unverified in some lanes while the others verify (their skipped chains'
// KV written beside their next trees), under both schedules and with --tree adaptive.
TEST_F(BatchDecoding, VvsSkippedRoundsTogetherEqualImagesAlone) {
  const MethodOptions small = {{"depth", "4"}, {"topk", "4"}, {"nodes", "10"}};
  expect_alone_equals_batched(inputs(3, 4.0f, small), "vvs");
  MethodOptions every_third = small;
  every_third["interval"] = "3";
  every_third["accept"] = "exact";
  expect_alone_equals_batched(inputs(4, 1.0f, every_third), "vvs", 2);
  MethodOptions dynamic = small;
  dynamic["schedule"] = "dynamic";
  dynamic["threshold"] = "0.2";
  expect_alone_equals_batched(inputs(3, 4.0f, dynamic), "vvs", 2);
  MethodOptions adaptive = small;
  adaptive["tree"] = "adaptive";
  adaptive["max-depth"] = "5";
  expect_alone_equals_batched(inputs(2, 4.0f, adaptive), "vvs");
}

// Continuous batching: five images in two lanes, each finished image's lane taken by the next
// input (whose condition query shares the forward with the other lane's window), still the
// tokens each image gets alone; no step advances more images than there are lanes.
TEST_F(BatchDecoding, ContinuousBatchingRefillsLanesWithTheTokensOfImagesAlone) {
  const std::vector<StrategyInputs> in = inputs(5, 4.0f, {{"window", "6"}});
  expect_alone_equals_batched(in, "scd-mc", 2);
  std::unique_ptr<BatchStrategy> st = make_batch_strategy("scd-mc", models(), in, 2);
  std::vector<int64_t> steps(in.size(), 0);
  while (!st->done()) {
    const std::vector<BatchEvent> events = st->step();
    EXPECT_LE(events.size(), 2u);
    for (const BatchEvent& b : events) EXPECT_EQ(b.event.step, steps[b.image]++) << "image " << b.image;
  }
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(steps[i], st->nfe(i));
  EXPECT_THROW(make_batch_strategy("ar", models(), in, 2), Error);  // ar keeps every image to the end
}

TEST_F(BatchDecoding, EventsNameEachImageAndItsOwnGrid) {
  const std::vector<StrategyInputs> in = inputs(2, 4.0f);
  std::vector<int64_t> steps(2, 0);
  const std::vector<Generation> g = generate_batch("ar", models(), in, true, [&](size_t image, const StepEvent& e) {
    ASSERT_LT(image, 2u);
    EXPECT_EQ(e.committed, ++steps[image]);
    EXPECT_EQ(e.grid[static_cast<size_t>(e.committed - 1)], e.proposed_tokens.at(0));
  });
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(steps[i], 64);
    EXPECT_EQ(g[i].events.size(), 64u);
    EXPECT_EQ(g[i].events.back().grid, g[i].tokens);
  }
}

TEST_F(BatchDecoding, RefusesWhatItCannotBatch) {
  try {
    generate_batch("sd", models(), inputs(2, 4.0f), false);
    FAIL() << "sd has no batch factory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--batch > 1 takes ar"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate_batch("zipar", models(), inputs(2, 4.0f, {{"verify", "exact"}}), false), Error);
  try {
    generate_batch("lantern", models(), inputs(2, 4.0f, {{"drafter", "model"}}), false);
    FAIL() << "lantern's drafter model has no batch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--batch takes --drafter jacobi or eagle"), std::string::npos) << e.what();
  }
  std::vector<StrategyInputs> mixed = inputs(2, 4.0f);
  mixed[1].sampler.temperature = 0.5f;
  EXPECT_THROW(generate_batch("ar", models(), mixed, false), Error);
  // More images than the model was loaded for: the cache cannot hold their rows.
  EXPECT_THROW(generate_batch("ar", models(), inputs(kMostImages + 1, 4.0f), false), Error);
}

}  // namespace
}  // namespace vkspec::testing
