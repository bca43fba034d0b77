// MuLo-SD: rejection islands (growth, clipping, 8-connectivity, order), and the strategy on tiny
// random GPTs over the shipped tokenizer's codebook: tau = 0 accepts every draft (one forward per
// band), tau = 1 rejects every draft so the whole band is one island resampled position by position,
// which is exactly ar (same visibility, same keys); in between, every event is consistent.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "decoding/islands.h"
#include "tests/support/chi_square.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/tokenizer.h"
#include "engine/model/latent_upsampler.h"
#include "engine/model/sr_net.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/tiny_upsamplers.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

TEST(RejectionIslands, GrowClipAndConnect) {
  // 8-wide grid, band [8, 40): rejected 9 (row 1, col 1) and 39 (row 4, col 7).
  const auto islands = rejection_islands({39, 9}, 8, 1, 8, 40);
  ASSERT_EQ(islands.size(), 2u);
  // 9's neighbourhood clipped at the band's first row and the left edge: rows 1-2, cols 0-2.
  EXPECT_EQ(islands[0], (std::vector<int32_t>{8, 9, 10, 16, 17, 18}));
  // 39's clipped at the band's end and the right edge: rows 3-4, cols 6-7.
  EXPECT_EQ(islands[1], (std::vector<int32_t>{30, 31, 38, 39}));
  // Diagonal contact joins: radius 0, rejected 7 (1,1) and 14 (2,2).
  EXPECT_EQ(rejection_islands({7, 14}, 6, 0, 6, 30).size(), 1u);
  // Not across the row wrap: 11 (1,5) and 12 (2,0) are not neighbours.
  EXPECT_EQ(rejection_islands({11, 12}, 6, 0, 6, 30).size(), 2u);
  EXPECT_TRUE(rejection_islands({}, 6, 2, 0, 36).empty());
  EXPECT_THROW(rejection_islands({40}, 6, 1, 0, 36), Error);
}

struct MuloModels {
  std::unique_ptr<Gpt> target, low;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<CodebookNeighbours> neighbours;
  std::unique_ptr<SrNet> sr2, sr4;          // random super-resolution nets, x2 (fits) and x4 (does not)
  std::unique_ptr<LatentUpsampler> latent;  // a random r = 2 latent upsampler on the tokenizer's codebook
  ModelSet set;
};

constexpr int64_t kGrid = 4;

// The target's spec (the shipped tokenizer's codebook, kGrid) and the low-resolution model's.
testing::TinyGptSpec target_spec() {
  testing::TinyGptSpec t;
  t.vocab = 1024;
  t.grid = kGrid;
  return t;
}
testing::TinyGptSpec low_spec() {
  testing::TinyGptSpec l = target_spec();
  l.grid = kGrid / 2;
  l.seed = 7;
  return l;
}

MuloModels& mulo_models(Context& ctx) {
  static MuloModels m = [&] {
    const std::string dir = testing::scratch_dir("mulo_models");
    const testing::TinyGptSpec t = target_spec(), l = low_spec();
    testing::write_tiny_gpt(dir + "/target.safetensors", t);
    testing::write_tiny_gpt(dir + "/low.safetensors", l);
    MuloModels r;
    GptOptions opt;
    opt.weights = DType::F32;
    r.target = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
    r.low = std::make_unique<Gpt>(ctx, dir + "/low.safetensors", opt);
    r.tokenizer = load_tokenizer(ctx, std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors", DType::F32, 1, kGrid);
    r.neighbours = std::make_unique<CodebookNeighbours>(ctx, *r.tokenizer, 16);
    testing::write_tiny_sr_net(dir + "/sr2.safetensors", 2, 8, 3, 5);
    testing::write_tiny_sr_net(dir + "/sr4.safetensors", 4, 8, 3, 6);
    testing::write_tiny_latent_upsampler(dir + "/latent.safetensors", 1024, r.tokenizer->codebook().shape()[1], 2, 8, 2,
                                         7);
    const int64_t low_px = (kGrid / 2) * r.tokenizer->downsample();
    r.sr2 = std::make_unique<SrNet>(ctx, dir + "/sr2.safetensors", low_px);
    r.sr4 = std::make_unique<SrNet>(ctx, dir + "/sr4.safetensors", low_px);
    r.latent = std::make_unique<LatentUpsampler>(ctx, dir + "/latent.safetensors", *r.tokenizer, kGrid / 2);
    r.set.ctx = &ctx;
    r.set.target = r.target.get();
    r.set.low_res = r.low.get();
    r.set.tokenizer = r.tokenizer.get();
    r.set.neighbours.add(r.neighbours.get());
    r.set.sr_net = r.sr2.get();
    r.set.latent_upsampler = r.latent.get();
    return r;
  }();
  return m;
}

class decoding_mulo : public testing::VulkanTest {};

// The whole distribution: with top-k / top-p a single remaining token would be accepted at tau = 1.
SamplerSettings full_settings() {
  SamplerSettings s;
  s.cfg = 2.0f;
  return s;
}

// condition: the class seed % 2 when none is given.
std::vector<int32_t> run(const std::string& method, const ModelSet& m, const MethodOptions& o, uint64_t seed,
                         std::vector<StepEvent>* events = nullptr,
                         std::shared_ptr<const Condition> condition = nullptr) {
  StrategyInputs in;
  in.condition = condition ? std::move(condition) : std::make_shared<ClassLabel>(static_cast<int64_t>(seed % 2));
  in.seed = seed;
  in.sampler = full_settings();
  in.options = o;
  return testing::run_checked(*make_strategy(method, m, in), events);
}

TEST_F(decoding_mulo, TauZeroAcceptsEveryBand) {
  const ModelSet& m = mulo_models(ctx()).set;
  for (const char* band : {"1", "2"}) {
    std::vector<StepEvent> ev;
    run("mulo", m, {{"tau", "0"}, {"band", band}}, 3, &ev);
    ASSERT_EQ(ev.size(), std::string(band) == "1" ? 2u : 1u) << band;
    for (const StepEvent& e : ev) {
      EXPECT_TRUE(e.islands.empty());
      EXPECT_TRUE(e.rejected.empty());
      EXPECT_EQ(e.proposed.size(), e.accepted.size());
    }
    EXPECT_EQ(ev.back().draft_forwards, (kGrid / 2) * (kGrid / 2));  // every low-resolution token
  }
}

TEST_F(decoding_mulo, TauOneIsArTokenForToken) {
  const ModelSet& m = mulo_models(ctx()).set;
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::vector<StepEvent> ev;
    const auto mulo = run("mulo", m, {{"tau", "1"}, {"radius", "0"}}, seed, &ev);
    EXPECT_EQ(mulo, run("ar", m, {}, seed)) << "seed " << seed;
    // Per band: the verification (one island: the whole band), then one wave per position.
    ASSERT_EQ(ev.size(), 2u * (1 + 2 * kGrid));
    EXPECT_EQ(ev[0].islands.size(), 1u);
    EXPECT_EQ(ev[0].islands[0].size(), static_cast<size_t>(2 * kGrid));
  }
}

// MuLo-SD on Janus-Pro: the low-resolution model is a Janus of its own (another text table: it
// reads the prompt's ids through it, Gpt::own_condition); at tau 1 it is ar token for token there
// too, and in between its events stay consistent.
TEST_F(decoding_mulo, OnJanusTauOneIsAr) {
  static const struct JanusPair {
    std::unique_ptr<Gpt> target, low;
    std::shared_ptr<const Condition> prompt;
  } pair = [&] {
    const std::string dir = testing::scratch_dir("mulo_janus_models");
    testing::write_tiny_janus(dir + "/target.safetensors", target_spec(), 5);
    testing::write_tiny_janus(dir + "/low.safetensors", low_spec(), 5);
    GptOptions opt;
    opt.weights = DType::F32;
    JanusPair p;
    p.target = std::make_unique<Gpt>(ctx(), dir + "/target.safetensors", opt);
    p.low = std::make_unique<Gpt>(ctx(), dir + "/low.safetensors", opt);
    p.prompt = testing::tiny_janus_prompt(dir + "/target.safetensors", {3, 7, 1}, "a prompt");
    return p;
  }();
  ModelSet m = mulo_models(ctx()).set;
  m.target = pair.target.get();
  m.low_res = pair.low.get();
  m.sr_net = nullptr;
  m.latent_upsampler = nullptr;
  for (uint64_t seed : {1u, 2u}) {
    std::vector<StepEvent> ev;
    EXPECT_EQ(run("mulo", m, {{"tau", "1"}, {"radius", "0"}}, seed, &ev, pair.prompt),
              run("ar", m, {}, seed, nullptr, pair.prompt))
        << seed;
    EXPECT_EQ(ev[0].islands.size(), 1u);
  }
  run("mulo", m, {{"tau", "0.012"}, {"k", "16"}}, 5, nullptr, pair.prompt);
}

TEST_F(decoding_mulo, MixedAcceptanceKeepsEventsConsistent) {
  const ModelSet& m = mulo_models(ctx()).set;
  int64_t islands = 0, accepted = 0;
  for (uint64_t seed = 10; seed < 16; ++seed) {
    std::vector<StepEvent> ev;
    run("mulo", m, {{"tau", "0.012"}, {"k", "16"}, {"radius", "1"}}, seed, &ev);
    for (const StepEvent& e : ev) {
      std::set<int32_t> seen;
      for (const auto& island : e.islands) {
        islands += 1;
        for (int32_t n : island) EXPECT_TRUE(seen.insert(n).second) << "islands overlap at " << n;
      }
      accepted += static_cast<int64_t>(e.accepted.size());
    }
  }
  EXPECT_GT(islands, 0);   // the threshold sits inside the pooled probabilities' range...
  EXPECT_GT(accepted, 0);  // ...so both outcomes happen
}

// Sequential islands: every wave resamples one position and everything before it is decided, so
// no query's context has holes; concurrent waves take one position per island.
TEST_F(decoding_mulo, SequentialIslandsResampleOnCompletePrefixes) {
  const ModelSet& m = mulo_models(ctx()).set;
  int64_t concurrent_multi = 0, sequential_waves = 0;
  for (uint64_t seed = 10; seed < 16; ++seed) {
    for (const char* mode : {"concurrent", "sequential"}) {
      std::vector<StepEvent> ev;
      run("mulo", m, {{"tau", "0.012"}, {"k", "16"}, {"radius", "0"}, {"islands", mode}}, seed, &ev);
      const bool sequential = std::string(mode) == "sequential";
      for (size_t i = 1; i < ev.size(); ++i) {
        const StepEvent& e = ev[i];
        if (e.resampled.empty()) continue;  // a band's verification
        if (!sequential) {
          concurrent_multi += e.resampled.size() > 1;
          continue;
        }
        ++sequential_waves;
        ASSERT_EQ(e.resampled.size(), 1u) << "seed " << seed << " step " << i;
        const int32_t n = e.resampled[0];
        for (int32_t before = 0; before < n; ++before)
          EXPECT_NE(ev[i - 1].grid[static_cast<size_t>(before)], kUndecided)
              << "seed " << seed << ": position " << n << " resampled before " << before << " was decided";
      }
    }
  }
  EXPECT_GT(sequential_waves, 0);
  EXPECT_GT(concurrent_multi, 0);  // the seeds do make several islands at once
}

// --resample coupled: island positions are decoded by coupled speculative decoding from their
// upsampled drafts. Some drafts survive the exact test, some are resampled, a resampled position
// is always the last one a step commits (what follows it is re-fed), and every event is consistent.
TEST_F(decoding_mulo, CoupledResamplingKeepsDraftsTheTargetAgrees) {
  const ModelSet& m = mulo_models(ctx()).set;
  int64_t kept = 0, resampled = 0, island_positions = 0;
  for (uint64_t seed = 20; seed < 26; ++seed) {
    std::vector<StepEvent> ev;
    run("mulo", m, {{"tau", "0.012"}, {"k", "16"}, {"radius", "1"}, {"resample", "coupled"}}, seed, &ev);
    std::set<int32_t> in_island;
    for (const StepEvent& e : ev) {
      if (!e.islands.empty() || (e.resampled.empty() && e.rejected.empty() && in_island.empty())) {
        for (const auto& island : e.islands) {
          island_positions += static_cast<int64_t>(island.size());
          in_island.insert(island.begin(), island.end());
        }
        continue;  // a band's verification
      }
      ASSERT_LE(e.resampled.size(), 1u);
      for (int32_t n : e.accepted) {
        EXPECT_TRUE(in_island.count(n)) << "seed " << seed << ": position " << n << " was not in an island";
        ++kept;
      }
      for (int32_t n : e.resampled) {
        EXPECT_TRUE(in_island.count(n)) << "seed " << seed << ": position " << n << " was not in an island";
        for (int32_t a : e.accepted) EXPECT_LT(a, n) << "seed " << seed << ": committed past a resampled position";
        ++resampled;
      }
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(resampled, 0);
  EXPECT_EQ(kept + resampled, island_positions);
}

// At tau = 1 with k = 1 every draft fails the pooled test (no filtered distribution is a point
// mass here), so every token comes from coupled decoding: the images must be distributed as ar's.
// Two-sample chi-square at significance 0.001 on positions 0, 6 and 15 (the last of the second
// band), top-k 2 so a few hundred images fill the cells; ar runs on disjoint seeds.
TEST_F(decoding_mulo, CoupledResamplingAtTauOneSamplesTheTarget) {
  const ModelSet& m = mulo_models(ctx()).set;
  SamplerSettings ss = full_settings();
  ss.top_k = 2;
  constexpr int kImages = 500;
  auto sample = [&](const std::string& method, const MethodOptions& o, uint64_t first) {
    std::vector<std::vector<int32_t>> grids;
    int64_t nfe = 0;
    for (int i = 0; i < kImages; ++i) {
      StrategyInputs in;
      in.condition = std::make_shared<ClassLabel>(i % 2);
      in.seed = first + static_cast<uint64_t>(i);
      in.sampler = ss;
      in.options = o;
      auto st = make_strategy(method, m, in);
      while (!st->done()) st->step();
      nfe += st->nfe();
      grids.push_back(st->grid());
    }
    std::printf("%s: %.2f target forwards per image\n", method.c_str(), static_cast<double>(nfe) / kImages);
    return grids;
  };
  const auto mulo = sample("mulo", {{"tau", "1"}, {"k", "1"}, {"radius", "0"}, {"resample", "coupled"}}, 0);
  const auto ar = sample("ar", {}, 1000000);
  for (int64_t pos : {0, 6, 15}) {
    std::vector<uint64_t> a(1024), b(1024);
    for (const auto& g : mulo) ++a[static_cast<size_t>(g[static_cast<size_t>(pos)])];
    for (const auto& g : ar) ++b[static_cast<size_t>(g[static_cast<size_t>(pos)])];
    const testing::ChiSquare c = testing::two_sample_chi_square(a, b);
    EXPECT_TRUE(c.fits()) << "position " << pos << ": " << c.str();
    std::printf("position %lld: %s\n", static_cast<long long>(pos), c.str().c_str());
  }
}

// --upsampler changes the drafts (what the target verifies), not the contract: events stay
// consistent, tau = 1 is still ar, and the latent path's drafts differ from the pixel path's.
TEST_F(decoding_mulo, UpsamplersChangeDraftsNotTheContract) {
  const ModelSet& m = mulo_models(ctx()).set;
  std::map<std::string, std::vector<int32_t>> first_drafts;
  for (const char* up : {"nearest", "pixel-sr", "latent"}) {
    for (uint64_t seed : {1u, 2u}) {
      EXPECT_EQ(run("mulo", m, {{"tau", "1"}, {"radius", "0"}, {"upsampler", up}}, seed), run("ar", m, {}, seed))
          << up << " seed " << seed;
      run("mulo", m, {{"tau", "0.05"}, {"upsampler", up}}, seed);
    }
    std::vector<StepEvent> ev;
    run("mulo", m, {{"tau", "0"}, {"upsampler", up}}, 5, &ev);
    ASSERT_FALSE(ev.empty());
    first_drafts[up] = ev[0].proposed_tokens;
    EXPECT_EQ(first_drafts[up].size(), static_cast<size_t>(2 * kGrid)) << up;
  }
  // The same low-resolution band (same seed, same low-resolution model), other high-resolution drafts.
  EXPECT_NE(first_drafts["latent"], first_drafts["nearest"]);
  EXPECT_NE(first_drafts["pixel-sr"], first_drafts["nearest"]);
}

TEST_F(decoding_mulo, UpsamplerNeedsItsModelAtTheRatio) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.sampler = full_settings();
  MuloModels& models = mulo_models(ctx());
  ModelSet m = models.set;
  auto message = [&](const MethodOptions& o) -> std::string {
    in.options = o;
    try {
      make_strategy("mulo", m, in);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message({{"upsampler", "bicubic"}}), "no error");
  m.sr_net = nullptr;
  EXPECT_NE(message({{"upsampler", "pixel-sr"}}).find("--sr-net"), std::string::npos);
  m.sr_net = models.sr4.get();  // x4 on an r = 2 pair
  EXPECT_NE(message({{"upsampler", "pixel-sr"}}).find("x4"), std::string::npos);
  m.latent_upsampler = nullptr;
  EXPECT_NE(message({{"upsampler", "latent"}}).find("--latent-upsampler"), std::string::npos);
  EXPECT_EQ(message({{"upsampler", "nearest"}}), "no error");  // nearest needs neither
  EXPECT_TRUE(find_strategy("mulo").needs_for({{"upsampler", "latent"}}).latent_upsampler);
  EXPECT_TRUE(find_strategy("mulo").needs_for({{"upsampler", "pixel-sr"}}).sr_net);
  EXPECT_FALSE(find_strategy("mulo").needs_for({}).sr_net);
  EXPECT_FALSE(find_strategy("mulo").needs_for({}).latent_upsampler);
}

TEST_F(decoding_mulo, NeedsItsModelsAndChecksOptions) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.sampler = full_settings();
  ModelSet m = mulo_models(ctx()).set;
  in.options = {{"tau", "2"}};
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  in.options = {{"band", "3"}};
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  in.options = {{"islands", "parallel"}};
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  in.options = {{"resample", "gumbel"}};
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  in.options = {{"resample", "coupled"}, {"islands", "sequential"}};
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  in.options = {};
  m.low_res = nullptr;
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  m = mulo_models(ctx()).set;
  m.low_res = m.target;  // not half as wide
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
}

}  // namespace
}  // namespace vkspec
