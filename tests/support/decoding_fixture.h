#pragma once
// Shared by the decoding-strategy tests: tiny random GPTs (a 3x3-token target with a vocabulary of
// 8 and a drafter close to it), the sampler settings the tests use, and a loop that runs many
// images through a strategy while checking that every StepEvent is consistent.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/draft_heads.h"
#include "engine/model/eagle_drafter.h"
#include "engine/model/latent_heads.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"

namespace vkspec::testing {

constexpr int64_t kTinyVocab = 8, kTinyGrid = 3;

// Thousands of tiny forwards cost lavapipe mostly thread hand-offs; running each dispatch on the
// submitting thread halves that (measured 17 -> 9 ms per 9-token image). Other drivers ignore it.
inline const int kInlineLavapipe = setenv("LP_NUM_THREADS", "0", 0);

// The files tiny_models() writes into TinyModels::dir.
inline constexpr const char* kTinyModelFiles[] = {"target.safetensors", "drafter.safetensors", "heads.safetensors",
                                                  "latent_heads.safetensors", "eagle.safetensors"};

struct TinyModels {
  std::string dir;
  std::unique_ptr<Gpt> target, drafter;
  std::unique_ptr<CodebookNeighbours> neighbours;  // of a random 2-d codebook for the vocabulary
  std::unique_ptr<DraftHeads> heads;               // random draft heads on the target
  std::unique_ptr<LatentHeads> latent_heads;       // random SSD latent heads on the target
  std::unique_ptr<EagleDrafter> eagle;             // a random EAGLE drafter on the target
  ModelSet set;
};

// Random draft heads, SSD latent heads and an EAGLE drafter for r.target (of spec t), written into
// r.dir and loaded into r and r.set. base_family: the family their files say they were trained on
// (empty: none, i.e. llamagen).
inline void add_tiny_companions(Context& ctx, TinyModels& r, const TinyGptSpec& t,
                                const std::string& base_family = "") {
  write_tiny_heads(r.dir + "/heads.safetensors", t, 0.15f, 3, base_family);
  write_tiny_latent_heads(r.dir + "/latent_heads.safetensors", t, 0.15f, 4, 16, base_family);
  std::vector<std::pair<std::string, std::string>> eagle_meta;
  if (!base_family.empty()) eagle_meta.emplace_back("base_family", base_family);
  write_tiny_eagle_drafter(r.dir + "/eagle.safetensors", t, 0.15f, 5, eagle_meta);
  r.heads = std::make_unique<DraftHeads>(ctx, r.dir + "/heads.safetensors", *r.target);
  r.set.heads = r.heads.get();
  r.latent_heads = std::make_unique<LatentHeads>(ctx, r.dir + "/latent_heads.safetensors", *r.target);
  r.set.latent_heads = r.latent_heads.get();
  r.eagle = std::make_unique<EagleDrafter>(ctx, r.dir + "/eagle.safetensors", *r.target);
  r.set.eagle = r.eagle.get();
}

// Writes the model files of a tiny set into dir (kTinyModelFiles) and loads them: the target of
// spec `t`, a drafter (the target plus noise: drafts that are often but not always right), random
// draft heads, SSD latent heads and an EAGLE drafter on the target, and the codebook neighbours of a
// random 2-d codebook.
inline TinyModels build_tiny_models(Context& ctx, const std::string& dir, const TinyGptSpec& t) {
  TinyGptSpec d = t;
  d.noise_seed = 2;
  d.noise_scale = 0.03f;
  write_tiny_gpt(dir + "/target.safetensors", t);
  write_tiny_gpt(dir + "/drafter.safetensors", d);
  TinyModels r;
  r.dir = dir;
  GptOptions opt;
  opt.weights = DType::F32;
  r.target = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
  r.drafter = std::make_unique<Gpt>(ctx, dir + "/drafter.safetensors", opt);
  std::vector<float> codebook(static_cast<size_t>(t.vocab * 2));
  for (size_t i = 0; i < codebook.size(); ++i) codebook[i] = static_cast<float>((i * 7919) % 23) / 23.0f;
  r.neighbours = std::make_unique<CodebookNeighbours>(ctx, codebook, t.vocab, 2, t.vocab, "tiny codebook");
  r.set.ctx = &ctx;
  r.set.target = r.target.get();
  r.set.drafter = r.drafter.get();
  r.set.neighbours.add(r.neighbours.get());
  add_tiny_companions(ctx, r, t);
  return r;
}

// Built once per process.
inline TinyModels& tiny_models(Context& ctx) {
  static TinyModels m = [&] {
    TinyGptSpec t;
    t.vocab = kTinyVocab;
    t.grid = kTinyGrid;
    return build_tiny_models(ctx, scratch_dir("decoding_models"), t);
  }();
  return m;
}

// Strong enough filtering that verifying against an unfiltered q is a visible bias.
inline SamplerSettings tiny_settings() {
  SamplerSettings s;
  s.cfg = 2.0f;
  s.temperature = 1.0f;
  s.top_k = 2;
  s.top_p = 0.9f;
  return s;
}

using Factory = std::function<std::unique_ptr<Strategy>(const ModelSet&, const StrategyInputs&)>;
// The condition of image i of a run (default: class i % 2 of the tiny class-conditional models).
using ConditionFor = std::function<std::shared_ptr<const Condition>(int)>;

inline Factory by_name(const std::string& method) {
  return [method](const ModelSet& m, const StrategyInputs& in) { return make_strategy(method, m, in); };
}

// `method` run with other sampler settings than tiny_settings().
inline Factory by_name(const std::string& method, const SamplerSettings& sampler) {
  return [method, sampler](const ModelSet& m, const StrategyInputs& in) {
    StrategyInputs with = in;
    with.sampler = sampler;
    return make_strategy(method, m, with);
  };
}

struct Sample {
  std::vector<std::vector<int32_t>> grids;
  std::vector<std::vector<StepEvent>> events;  // only when kept
  double ms_per_image = 0, nfe_per_image = 0;
};

// Histogram of the token at `pos` over a sample's images, or of the pair (pos, pos + 1).
inline std::vector<uint64_t> token_histogram(const Sample& s, int64_t pos, bool pair) {
  const size_t V = static_cast<size_t>(kTinyVocab);
  std::vector<uint64_t> h(pair ? V * V : V);
  for (const auto& g : s.grids) {
    const size_t a = static_cast<size_t>(g[static_cast<size_t>(pos)]);
    ++h[pair ? a * V + static_cast<size_t>(g[static_cast<size_t>(pos + 1)]) : a];
  }
  return h;
}

// Checks what every strategy promises about its events: committed positions are listed exactly
// once (accepted or resampled) in the step that decides them, proposed positions carry tokens,
// one target forward per step (none in a step that says it verified nothing: vvs's skipped rounds).
// Positions need not be decided in raster order (zipar, mulo).
inline void check_event(const StepEvent& e, const std::vector<int32_t>& grid_before, int64_t committed_before,
                        int64_t nfe_before, const Strategy& s) {
  EXPECT_EQ(e.committed, committed_before + static_cast<int64_t>(e.accepted.size() + e.resampled.size()));
  EXPECT_EQ(e.nfe, nfe_before + (e.verified ? 1 : 0));
  EXPECT_EQ(e.proposed.size(), e.proposed_tokens.size());
  std::vector<int32_t> newly;
  for (const auto* list : {&e.accepted, &e.resampled})
    for (int32_t n : *list) {
      ASSERT_TRUE(n >= 0 && n < static_cast<int32_t>(e.grid.size())) << "position " << n;
      EXPECT_EQ(grid_before[static_cast<size_t>(n)], kUndecided) << "position " << n << " committed twice";
      EXPECT_NE(e.grid[static_cast<size_t>(n)], kUndecided) << "position " << n;
      newly.push_back(n);
    }
  std::sort(newly.begin(), newly.end());
  EXPECT_EQ(std::adjacent_find(newly.begin(), newly.end()), newly.end()) << "a position listed twice";
  int64_t decided = 0;
  for (size_t n = 0; n < e.grid.size(); ++n) {
    decided += e.grid[n] != kUndecided;
    if (grid_before[n] != kUndecided) {
      EXPECT_EQ(e.grid[n], grid_before[n]) << "position " << n << " changed";
    }
  }
  EXPECT_EQ(decided, e.committed);
  EXPECT_EQ(e.done, s.done());
}

// Steps a strategy to the end, checking every event against the one before (check_event); the
// events kept in `events` when given. Returns the final grid.
inline std::vector<int32_t> run_checked(Strategy& st, std::vector<StepEvent>* events = nullptr) {
  int64_t committed = 0, forwards = 0;
  std::vector<int32_t> grid(st.grid());
  while (!st.done()) {
    StepEvent e = st.step();
    check_event(e, grid, committed, forwards, st);
    grid = e.grid;
    committed = e.committed;
    forwards = e.nfe;
    if (events) events->push_back(std::move(e));
  }
  return st.grid();
}

// models: another model set than the tiny class-conditional one (text-to-image tests), with
// condition_for giving each image's condition.
inline Sample run_images(Context& ctx, const Factory& make, const MethodOptions& options, uint64_t first_seed,
                         int images, bool keep_events = false, const ModelSet* models = nullptr,
                         const ConditionFor& condition_for = {}) {
  Sample s;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t nfe = 0;
  for (int i = 0; i < images; ++i) {
    StrategyInputs in;
    in.condition = condition_for ? condition_for(i) : std::make_shared<ClassLabel>(i % 2);
    in.seed = first_seed + static_cast<uint64_t>(i);
    in.sampler = tiny_settings();
    in.options = options;
    std::unique_ptr<Strategy> st = make(models ? *models : tiny_models(ctx).set, in);
    std::vector<StepEvent> events;
    s.grids.push_back(run_checked(*st, keep_events ? &events : nullptr));
    nfe += st->nfe();
    if (keep_events) s.events.push_back(std::move(events));
  }
  s.ms_per_image = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / images;
  s.nfe_per_image = static_cast<double>(nfe) / images;
  return s;
}

}  // namespace vkspec::testing
