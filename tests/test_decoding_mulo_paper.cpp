// MuLo-SD as the paper describes it (issue 18): ZipAR-parallel low-resolution drafting and island
// waves (--parallel zipar), raster backtracking (--backtrack raster, the paper's baseline), and
// resolution ratios r = 2 and 4, on tiny random GPTs over the shipped tokenizer's codebook (an
// 8x8-token target with a 4x4 and a 2x2 low-resolution model). Lossy: these tests check the
// schedules (forwards per band and per wave, which positions a wave takes), the reductions to ar
// at tau = 1, and the errors.
#include <gtest/gtest.h>

#include <set>

#include "decoding/islands.h"
#include "decoding/pixel_resampler.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/tokenizer.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

TEST(IslandWaves, ZipArReadyPositions) {
  // 8-wide grid; an island of rows 1-2, columns 0-5 (positions 8-13, 16-21).
  const std::vector<int32_t> island = {8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21};
  // Window >= width: the front alone (raster order).
  EXPECT_EQ(island_ready_positions(island, 8, 8), (std::vector<int32_t>{8}));
  // Window 2: row 2 waits until row 1 is 2 columns ahead.
  EXPECT_EQ(island_ready_positions(island, 8, 2), (std::vector<int32_t>{8}));
  const std::vector<int32_t> later = {10, 11, 12, 13, 16, 17, 18, 19, 20, 21};  // 8, 9 decided
  EXPECT_EQ(island_ready_positions(later, 8, 2), (std::vector<int32_t>{10, 16}));
  EXPECT_EQ(island_ready_positions(later, 8, 3), (std::vector<int32_t>{10}));
  // An island whose row above ends early does not hold the row below back beyond its own columns.
  EXPECT_EQ(island_ready_positions({3, 10, 11, 12}, 8, 1), (std::vector<int32_t>{3, 10}));
  // Rows further up count too: 1 (col 1) holds back 17 (col 1) with window 1.
  EXPECT_EQ(island_ready_positions({1, 17}, 8, 1), (std::vector<int32_t>{1}));
  EXPECT_TRUE(island_ready_positions({}, 8, 2).empty());
  EXPECT_THROW(island_ready_positions({3, 2}, 8, 2), Error);
  EXPECT_THROW(island_ready_positions({3}, 8, 0), Error);
}

constexpr int64_t kGrid = 8;

struct PaperModels {
  std::unique_ptr<Gpt> target, low2, low4, low3;  // low-resolution grids 4 (r = 2), 2 (r = 4), 3 (no r)
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<CodebookNeighbours> neighbours;
  ModelSet r2, r4;
};

PaperModels& paper_models(Context& ctx) {
  static PaperModels m = [&] {
    const std::string dir = testing::scratch_dir("mulo_paper_models");
    testing::TinyGptSpec t;
    t.vocab = 1024;  // the shipped tokenizer's codebook
    t.grid = kGrid;
    testing::write_tiny_gpt(dir + "/target.safetensors", t);
    for (int64_t g : {4, 2, 3}) {
      testing::TinyGptSpec l = t;
      l.grid = g;
      l.seed = 7 + static_cast<uint64_t>(g);
      testing::write_tiny_gpt(dir + "/low" + std::to_string(g) + ".safetensors", l);
    }
    PaperModels r;
    GptOptions opt;
    opt.weights = DType::F32;
    opt.max_queries = 256;
    r.target = std::make_unique<Gpt>(ctx, dir + "/target.safetensors", opt);
    r.low2 = std::make_unique<Gpt>(ctx, dir + "/low4.safetensors", opt);
    r.low4 = std::make_unique<Gpt>(ctx, dir + "/low2.safetensors", opt);
    r.low3 = std::make_unique<Gpt>(ctx, dir + "/low3.safetensors", opt);
    r.tokenizer = load_tokenizer(ctx, std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors", DType::F32, 1, kGrid);
    r.neighbours = std::make_unique<CodebookNeighbours>(ctx, *r.tokenizer, 16);
    r.r2.ctx = &ctx;
    r.r2.target = r.target.get();
    r.r2.low_res = r.low2.get();
    r.r2.tokenizer = r.tokenizer.get();
    r.r2.neighbours.add(r.neighbours.get());
    r.r4 = r.r2;
    r.r4.low_res = r.low4.get();
    return r;
  }();
  return m;
}

class decoding_mulo_paper : public testing::VulkanTest {};

std::vector<int32_t> run(const std::string& method, const ModelSet& m, const MethodOptions& o, uint64_t seed,
                         std::vector<StepEvent>* events = nullptr) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(static_cast<int64_t>(seed % 2));
  in.seed = seed;
  in.sampler.cfg = 2.0f;  // the whole distribution: at tau = 1 nothing passes the pooled test
  in.options = o;
  return testing::run_checked(*make_strategy(method, m, in), events);
}

// ZipAR drafting: b low rows of w tokens in (b - 1) window + w low-resolution forwards instead of
// b w; one row per band cannot overlap. At tau = 0 every band is one target forward.
TEST_F(decoding_mulo_paper, ZipArDraftingForwards) {
  const ModelSet& m = paper_models(ctx()).r2;  // low grid 4
  struct Case {
    const char *parallel, *window, *band;
    size_t steps;
    int64_t low_forwards;
  };
  for (const Case& c :
       {Case{"none", nullptr, "4", 1, 16}, Case{"zipar", "2", "4", 1, 3 * 2 + 4}, Case{"zipar", "1", "4", 1, 3 * 1 + 4},
        Case{"zipar", "1", "2", 2, 2 * (1 + 4)}, Case{"zipar", "2", "1", 4, 16}, Case{"zipar", "9", "4", 1, 16}}) {
    MethodOptions o = {{"tau", "0"}, {"parallel", c.parallel}, {"band", c.band}};
    if (c.window) o["zipar-window"] = c.window;
    std::vector<StepEvent> ev;
    run("mulo", m, o, 3, &ev);
    ASSERT_EQ(ev.size(), c.steps) << c.parallel << " " << (c.window ? c.window : "") << " band " << c.band;
    EXPECT_EQ(ev.back().draft_forwards, c.low_forwards)
        << c.parallel << " " << (c.window ? c.window : "") << " band " << c.band;
    for (const StepEvent& e : ev) EXPECT_EQ(e.accepted.size(), e.proposed.size());
  }
}

// The parallel rows change what the low-resolution model sees, so the drafts differ from serial
// drafting on some seeds.
TEST_F(decoding_mulo_paper, ZipArDraftsDifferFromSerial) {
  const ModelSet& m = paper_models(ctx()).r2;
  int differing = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<StepEvent> serial, zipar;
    const auto a = run("mulo", m, {{"tau", "0"}, {"band", "4"}, {"parallel", "none"}}, seed, &serial);
    const auto b = run("mulo", m, {{"tau", "0"}, {"band", "4"}, {"zipar-window", "1"}}, seed, &zipar);
    differing += a != b;
  }
  EXPECT_GT(differing, 0);
}

// At tau = 1 every draft is rejected and, with radius 0, each band is one island. Serial waves
// (--parallel none, or a window as wide as the grid) are ar token for token, for r = 2 and 4.
TEST_F(decoding_mulo_paper, TauOneIsArWithSerialWaves) {
  PaperModels& pm = paper_models(ctx());
  for (const ModelSet* m : {&pm.r2, &pm.r4}) {
    const int64_t r = kGrid / m->low_res->config().grid_size;
    for (uint64_t seed : {1u, 2u}) {
      const auto ar = run("ar", *m, {}, seed);
      for (const char* window : {"", "8"}) {
        MethodOptions o = {{"tau", "1"}, {"radius", "0"}};
        if (*window)
          o["zipar-window"] = window;
        else
          o["parallel"] = "none";
        std::vector<StepEvent> ev;
        EXPECT_EQ(run("mulo", *m, o, seed, &ev), ar) << "r " << r << " seed " << seed << " window " << window;
        // Per band (r high rows): the verification, then one wave per position.
        EXPECT_EQ(ev.size(), static_cast<size_t>((kGrid / r) * (1 + r * kGrid))) << "r " << r;
        EXPECT_EQ(ev[0].islands.size(), 1u);
        EXPECT_EQ(ev[0].islands[0].size(), static_cast<size_t>(r * kGrid));
      }
    }
  }
}

// ZipAR waves at tau = 1, window 2: a band's r rows finish in (r - 1) 2 + W waves, each wave
// takes one position per active row of the island, and a position never waits for less than
// the rule says (its row above within the island is 2 columns ahead, its left neighbour done).
TEST_F(decoding_mulo_paper, ZipArWavesFollowTheWindow) {
  PaperModels& pm = paper_models(ctx());
  for (const ModelSet* m : {&pm.r2, &pm.r4}) {
    const int64_t r = kGrid / m->low_res->config().grid_size;
    std::vector<StepEvent> ev;
    run("mulo", *m, {{"tau", "1"}, {"radius", "0"}, {"zipar-window", "2"}}, 5, &ev);
    const int64_t waves_per_band = (r - 1) * 2 + kGrid;
    ASSERT_EQ(ev.size(), static_cast<size_t>((kGrid / r) * (1 + waves_per_band))) << "r " << r;
    size_t widest = 0;
    for (size_t i = 1; i < ev.size(); ++i) {
      if (ev[i].resampled.empty()) continue;  // a verification
      widest = std::max(widest, ev[i].resampled.size());
      std::set<int64_t> rows;
      for (int32_t n : ev[i].resampled) {
        EXPECT_TRUE(rows.insert(n / kGrid).second) << "two positions of one row in a wave";
        const int64_t c = n % kGrid;
        if (c > 0) {
          EXPECT_NE(ev[i - 1].grid[static_cast<size_t>(n - 1)], kUndecided);
        }
        const int64_t above = n - kGrid, band_first = (n / kGrid) / r * r * kGrid;
        if (above >= band_first) {
          EXPECT_NE(ev[i - 1].grid[static_cast<size_t>(above - c + std::min<int64_t>(c + 1, kGrid - 1))], kUndecided)
              << "position " << n << " started before the row above was 2 ahead";
        }
      }
    }
    EXPECT_EQ(widest, static_cast<size_t>(r));  // every row of the band active at once
  }
}

// Raster backtracking: each step keeps the drafts up to the first rejection, which takes the
// target's sample, and nothing after it; at tau = 1 that is ar token for token (one target
// forward per token, the band redrafted every time); at tau = 0 one forward per band.
TEST_F(decoding_mulo_paper, RasterBacktrackingIsStandardSd) {
  PaperModels& pm = paper_models(ctx());
  for (const auto& [m, parallel] : {std::pair<const ModelSet*, const char*>{&pm.r2, "zipar"}, {&pm.r4, "none"}}) {
    const int64_t r = kGrid / m->low_res->config().grid_size, w = kGrid / r;
    {
      std::vector<StepEvent> ev;
      EXPECT_EQ(run("mulo", *m, {{"tau", "1"}, {"backtrack", "raster"}, {"parallel", parallel}}, 4, &ev),
                run("ar", *m, {}, 4))
          << "r " << r << " " << parallel;
      ASSERT_EQ(ev.size(), static_cast<size_t>(kGrid * kGrid));
      // Every step redrafts the band holding its position: one low row of w tokens.
      EXPECT_EQ(ev.back().draft_forwards, kGrid * kGrid * w);
      ev.clear();
      run("mulo", *m, {{"tau", "0"}, {"backtrack", "raster"}, {"parallel", parallel}}, 4, &ev);
      EXPECT_EQ(ev.size(), static_cast<size_t>(w));
    }
  }
  const ModelSet& m = pm.r2;
  int64_t accepted = 0, rejected = 0;
  for (uint64_t seed = 10; seed < 14; ++seed) {
    std::vector<StepEvent> ev;
    run("mulo", m, {{"tau", "0.012"}, {"k", "16"}, {"backtrack", "raster"}}, seed, &ev);
    for (const StepEvent& e : ev) {
      EXPECT_TRUE(e.islands.empty());
      ASSERT_LE(e.resampled.size(), 1u);
      // The committed positions are one run from the frontier, the resampled one last.
      std::vector<int32_t> run_ = e.accepted;
      run_.insert(run_.end(), e.resampled.begin(), e.resampled.end());
      for (size_t i = 1; i < run_.size(); ++i) EXPECT_EQ(run_[i], run_[i - 1] + 1);
      if (!run_.empty()) {
        EXPECT_EQ(run_.front(), e.proposed.front());
      }
      accepted += static_cast<int64_t>(e.accepted.size());
      rejected += static_cast<int64_t>(e.rejected.size());
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// r = 4: a low row is four target rows; at tau = 0 each band of the 2x2 model proposes 4 x 8
// positions in one forward.
TEST_F(decoding_mulo_paper, RatioFourMapsALowRowToFourRows) {
  const ModelSet& m = paper_models(ctx()).r4;
  std::vector<StepEvent> ev;
  run("mulo", m, {{"tau", "0"}}, 6, &ev);
  ASSERT_EQ(ev.size(), 2u);
  for (size_t b = 0; b < 2; ++b) {
    ASSERT_EQ(ev[b].proposed.size(), static_cast<size_t>(4 * kGrid));
    EXPECT_EQ(ev[b].proposed.front(), static_cast<int32_t>(b * 4 * kGrid));
  }
  EXPECT_EQ(ev.back().draft_forwards, 4);
  // Islands stay within their band.
  ev.clear();
  run("mulo", m, {{"tau", "0.012"}, {"k", "16"}, {"radius", "2"}}, 7, &ev);
  for (const StepEvent& e : ev)
    for (const auto& island : e.islands) {
      const int32_t band = island.front() / (4 * kGrid);
      for (int32_t n : island) EXPECT_EQ(n / (4 * kGrid), band);
    }
}

TEST_F(decoding_mulo_paper, ChecksRatiosAndOptions) {
  PaperModels& pm = paper_models(ctx());
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.sampler.cfg = 2.0f;
  ModelSet m = pm.r2;
  m.low_res = pm.low3.get();  // 8 / 3: not a whole ratio
  try {
    make_strategy("mulo", m, in);
    ADD_FAILURE() << "a 3-token low-resolution grid under an 8-token target was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a whole number"), std::string::npos) << e.what();
  }
  m.low_res = pm.target.get();  // ratio 1
  EXPECT_THROW(make_strategy("mulo", m, in), Error);
  m = pm.r2;
  for (const MethodOptions& o : std::vector<MethodOptions>{{{"parallel", "none"}, {"zipar-window", "2"}},
                                                           {{"backtrack", "raster"}, {"radius", "2"}},
                                                           {{"backtrack", "raster"}, {"islands", "sequential"}},
                                                           {{"backtrack", "raster"}, {"resample", "coupled"}},
                                                           {{"backtrack", "spiral"}},
                                                           {{"parallel", "lpd"}},
                                                           {{"zipar-window", "0"}}}) {
    in.options = o;
    EXPECT_THROW(make_strategy("mulo", m, in), Error) << o.begin()->first << " " << o.rbegin()->first;
  }
  EXPECT_THROW(PixelResampler(ctx(), *pm.tokenizer, 2, 3), Error);
  EXPECT_THROW(PixelResampler(ctx(), *pm.tokenizer, 2, 1), Error);
  // Sizing: the target verifies r band rows plus the re-fed band before.
  const StrategyDescriptor& d = find_strategy("mulo");
  EXPECT_EQ(d.max_queries_for({}, pm.target->config(), &pm.low4->config()), 2 * 4 * kGrid);
  EXPECT_EQ(d.max_queries_for({{"band", "2"}}, pm.target->config(), &pm.low2->config()), 2 * 2 * 2 * kGrid);
}

}  // namespace
}  // namespace vkspec
