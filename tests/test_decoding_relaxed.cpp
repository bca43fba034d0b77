// Relaxed acceptance (LANTERN) and the codebook neighbour table it reads: the table's order and
// cache; delta = 0 is exactly the lossless method it relaxes (same tokens, same events); delta = 1
// over the whole codebook accepts every draft; in between, fewer forwards than exact acceptance;
// coupled drafting under relaxation carries the exact successor forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "tests/support/scoped_faults.h"
#include "decoding/sd_strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;
using testing::tiny_models;

class decoding_relaxed : public testing::VulkanTest {};

TEST(CodebookNeighboursTable, SelfFirstThenByDistanceTiesToLowerIndex) {
  // 1-d codebook: 0.0, 1.0, 0.5, 1.0, -0.5
  const std::vector<float> cb = {0.0f, 1.0f, 0.5f, 1.0f, -0.5f};
  const auto t = CodebookNeighbours::compute(cb, 5, 1, 4);
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(std::vector<uint32_t>(t.begin(), t.begin() + 4), (std::vector<uint32_t>{0, 2, 4, 1}));
  // Entry 3 has the same vector as 1: itself first, then 1 (distance 0), then 2.
  EXPECT_EQ(std::vector<uint32_t>(t.begin() + 12, t.begin() + 16), (std::vector<uint32_t>{3, 1, 2, 0}));
  EXPECT_EQ(CodebookNeighbours::compute(cb, 5, 1, 99).size(), 25u);  // k clamped to the codebook
  EXPECT_THROW(CodebookNeighbours::compute(cb, 4, 2, 2), Error);
}

// A 2-d codebook where L2 and cosine disagree: 1 points like 0 but lies far from it, 2 lies near
// 0 at 45 degrees, 3 points away from 0, 4 is orthogonal to 0, 5 is the zero vector.
const std::vector<float> kTwoMetricCodebook = {1, 0, 10, 1, 0.5f, 0.5f, -1, 0, 0, 2, 0, 0};

std::vector<uint32_t> row(const std::vector<uint32_t>& table, int64_t k, int64_t x) {
  return std::vector<uint32_t>(table.begin() + x * k, table.begin() + (x + 1) * k);
}

TEST(CodebookNeighboursTable, L2OrdersByDistanceBetweenRawRows) {
  const auto t = CodebookNeighbours::compute(kTwoMetricCodebook, 6, 2, 6, NeighbourMetric::L2);
  // From 0: 2 (0.5), 5 (1), 3 (4), 4 (5), 1 (82) in squared distance.
  EXPECT_EQ(row(t, 6, 0), (std::vector<uint32_t>{0, 2, 5, 3, 4, 1}));
  EXPECT_EQ(t, CodebookNeighbours::compute(kTwoMetricCodebook, 6, 2, 6));  // L2 is the default
}

TEST(CodebookNeighboursTable, CosineOrdersByAngleWhateverTheLength) {
  const auto t = CodebookNeighbours::compute(kTwoMetricCodebook, 6, 2, 6, NeighbourMetric::Cosine);
  // The zero row has cos 0 with every row (ties: lower index first).
  // From 0: 1 (cos 0.995), 2 (0.707), 4 and 5 (cos 0), 3 (cos -1).
  EXPECT_EQ(row(t, 6, 0), (std::vector<uint32_t>{0, 1, 2, 4, 5, 3}));
  // From 4 (0, 2): 2 (0.707), 1 (0.0995), then 0, 3 and 5 at cos 0.
  EXPECT_EQ(row(t, 6, 4), (std::vector<uint32_t>{4, 2, 1, 0, 3, 5}));
  // The zero row: itself, then every other entry by index.
  EXPECT_EQ(row(t, 6, 5), (std::vector<uint32_t>{5, 0, 1, 2, 3, 4}));
}

TEST(CodebookNeighboursTable, RandomIsSeededAndListsEachOtherEntryOnce) {
  constexpr int64_t V = 50, dim = 3;
  std::vector<float> cb(V * dim), other(V * dim);
  for (size_t i = 0; i < cb.size(); ++i) {
    cb[i] = static_cast<float>((i * 7919) % 97) / 97.0f;
    other[i] = -static_cast<float>(i);
  }
  const auto t = CodebookNeighbours::compute(cb, V, dim, V, NeighbourMetric::Random);
  // The same table every time, whatever the codebook's values (only its size matters).
  EXPECT_EQ(t, CodebookNeighbours::compute(cb, V, dim, V, NeighbourMetric::Random));
  EXPECT_EQ(t, CodebookNeighbours::compute(other, V, dim, V, NeighbourMetric::Random));
  int64_t in_place = 0;
  for (int64_t x = 0; x < V; ++x) {
    std::vector<uint32_t> r = row(t, V, x);
    EXPECT_EQ(r[0], static_cast<uint32_t>(x));  // itself first, and never again
    std::sort(r.begin(), r.end());
    for (int64_t m = 0; m < V; ++m) ASSERT_EQ(r[static_cast<size_t>(m)], static_cast<uint32_t>(m)) << "row " << x;
    for (int64_t m = 1; m < V; ++m) in_place += t[static_cast<size_t>(x * V + m)] == static_cast<uint32_t>(m);
  }
  EXPECT_LT(in_place, V * 5);  // shuffled: about one entry per row stays where identity order puts it
  EXPECT_NE(t, CodebookNeighbours::compute(cb, V, dim, V, NeighbourMetric::L2));
  // A shorter row is the longer row's prefix, so --k means the same set under every k_max.
  const auto short_rows = CodebookNeighbours::compute(cb, V, dim, 8, NeighbourMetric::Random);
  for (int64_t x = 0; x < V; ++x) {
    const std::vector<uint32_t> r = row(t, V, x);
    EXPECT_EQ(row(short_rows, 8, x), std::vector<uint32_t>(r.begin(), r.begin() + 8));
  }
}

TEST(CodebookNeighboursTable, MetricNames) {
  for (int m = 0; m < kNeighbourMetricCount; ++m)
    EXPECT_EQ(parse_neighbour_metric(neighbour_metric_name(static_cast<NeighbourMetric>(m))),
              static_cast<NeighbourMetric>(m));
  try {
    parse_neighbour_metric("manhattan");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("l2, cosine, random"), std::string::npos) << e.what();
  }
}

// Each metric has its own cache entry: a table cached for one metric is never read for another.
TEST_F(decoding_relaxed, NeighbourTableCacheIsPerMetric) {
  std::vector<float> cb = kTwoMetricCodebook;
  cb[11] = static_cast<float>(::testing::UnitTest::GetInstance()->random_seed());  // a fresh cache entry
  std::vector<std::string> paths;
  for (int m = 0; m < kNeighbourMetricCount; ++m) {
    const NeighbourMetric metric = static_cast<NeighbourMetric>(m);
    const CodebookNeighbours built(ctx(), cb, 6, 2, 6, "test", metric);
    EXPECT_EQ(built.metric(), metric);
    const CodebookNeighbours again(ctx(), cb, 6, 2, 6, "test", metric);
    std::vector<uint32_t> got(36);
    ctx().download(again.table(), got.data(), got.size() * 4);
    EXPECT_EQ(got, CodebookNeighbours::compute(cb, 6, 2, 6, metric)) << neighbour_metric_name(metric);
    if (!again.cache_path().empty()) paths.push_back(again.cache_path());
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(std::unique(paths.begin(), paths.end()), paths.end());
  for (const std::string& p : paths) std::remove(p.c_str());
}

TEST_F(decoding_relaxed, NeighbourTableIsCachedAndADamagedCacheIsRebuilt) {
  if (ctx().options().cache_dir.empty()) GTEST_SKIP() << "caching is off (VKSPEC_CACHE_DIR=off)";
  std::vector<float> cb(37 * 3);
  for (size_t i = 0; i < cb.size(); ++i) cb[i] = static_cast<float>((i * 104729 + 17) % 101) / 101.0f;
  cb[0] = static_cast<float>(::testing::UnitTest::GetInstance()->random_seed());  // a fresh cache entry
  std::remove(CodebookNeighbours(ctx(), cb, 37, 3, 10, "test").cache_path().c_str());
  const CodebookNeighbours first(ctx(), cb, 37, 3, 10, "test");
  EXPECT_FALSE(first.loaded_from_cache());
  const CodebookNeighbours second(ctx(), cb, 37, 3, 10, "test");
  EXPECT_TRUE(second.loaded_from_cache());
  const std::vector<uint32_t> want = CodebookNeighbours::compute(cb, 37, 3, 10);
  std::vector<uint32_t> got(want.size());
  ctx().download(second.table(), got.data(), got.size() * 4);
  EXPECT_EQ(got, want);
  {
    std::fstream f(second.cache_path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    const uint32_t bad = 1000;  // an entry outside the codebook
    f.write(reinterpret_cast<const char*>(&bad), 4);
  }
  const CodebookNeighbours third(ctx(), cb, 37, 3, 10, "test");
  EXPECT_FALSE(third.loaded_from_cache());
  ctx().download(third.table(), got.data(), got.size() * 4);
  EXPECT_EQ(got, want);
  std::remove(third.cache_path().c_str());
}

void expect_same_run(const testing::Sample& a, const testing::Sample& b, const std::string& what) {
  EXPECT_EQ(a.grids, b.grids) << what;
  ASSERT_EQ(a.events.size(), b.events.size()) << what;
  for (size_t i = 0; i < a.events.size(); ++i) {
    ASSERT_EQ(a.events[i].size(), b.events[i].size()) << what << " image " << i;
    for (size_t k = 0; k < a.events[i].size(); ++k) {
      EXPECT_EQ(a.events[i][k].accepted, b.events[i][k].accepted) << what;
      EXPECT_EQ(a.events[i][k].rejected, b.events[i][k].rejected) << what;
    }
  }
}

// With delta = 0 only neighbours the target gives no mass join the neighbourhood: p' = p.
TEST_F(decoding_relaxed, ZeroDeltaIsTheExactMethod) {
  const MethodOptions zero = {{"k", "8"}, {"delta", "0"}};
  auto with = [](MethodOptions o, const MethodOptions& more) {
    o.insert(more.begin(), more.end());
    return o;
  };
  expect_same_run(run_images(ctx(), by_name("sjd"), {{"window", "4"}}, 5, 12, true),
                  run_images(ctx(), by_name("lantern"), with(zero, {{"window", "4"}}), 5, 12, true), "lantern/sjd");
  expect_same_run(run_images(ctx(), by_name("scd-mc"), {{"window", "4"}}, 5, 12, true),
                  run_images(ctx(), by_name("scd-mc"), with(zero, {{"window", "4"}, {"accept", "lantern"}}), 5, 12,
                             true),
                  "scd-mc");
  expect_same_run(run_images(ctx(), by_name("sd"), {{"window", "3"}}, 5, 12, true),
                  run_images(ctx(), by_name("lantern"), with(zero, {{"window", "3"}, {"drafter", "model"}}), 5, 12,
                             true),
                  "lantern/sd");
}

TEST_F(decoding_relaxed, FullDeltaOverTheWholeCodebookAcceptsEveryDraft) {
  for (const char* drafter : {"jacobi", "model"}) {
    const testing::Sample s =
        run_images(ctx(), by_name("lantern"), {{"k", "8"}, {"delta", "1"}, {"window", "4"}, {"drafter", drafter}}, 9,
                   10, true);
    for (const auto& events : s.events) {
      ASSERT_EQ(events.size(), 2u) << drafter;  // 9 tokens: 4 drafts + 1, then 4 drafts
      for (const StepEvent& e : events) EXPECT_TRUE(e.rejected.empty()) << drafter;
    }
  }
}

// --metric picks the table the relaxed test reads, for LANTERN, sd --accept lantern and MuLo-SD's
// pooling alike: a run reading the l2 table put in the random slot is the l2 run, and the real
// random table changes what is accepted.
TEST_F(decoding_relaxed, MetricPicksTheNeighbourTable) {
  testing::TinyModels& tiny = testing::tiny_models(ctx());
  std::vector<float> codebook(testing::kTinyVocab * 2);  // only the size matters to the random metric
  const CodebookNeighbours random(ctx(), codebook, testing::kTinyVocab, 2, testing::kTinyVocab, "tiny codebook",
                                  NeighbourMetric::Random);
  ModelSet l2_as_random = tiny.set, with_random = tiny.set;
  l2_as_random.neighbours.by_metric[static_cast<size_t>(NeighbourMetric::Random)] = tiny.neighbours.get();
  with_random.neighbours.add(&random);
  for (const MethodOptions& o :
       std::vector<MethodOptions>{{{"window", "6"}}, {{"window", "3"}, {"drafter", "model"}}}) {
    MethodOptions base = o;
    base.insert({{"k", "3"}, {"delta", "0.5"}});
    MethodOptions randomised = base;
    randomised["metric"] = "random";
    const testing::Sample l2 = run_images(ctx(), by_name("lantern"), base, 30, 12, true);
    expect_same_run(l2, run_images(ctx(), by_name("lantern"), randomised, 30, 12, true, &l2_as_random), "lantern");
    EXPECT_NE(l2.grids, run_images(ctx(), by_name("lantern"), randomised, 30, 12, false, &with_random).grids);
  }
  EXPECT_THROW(run_images(ctx(), by_name("lantern"), {{"metric", "random"}}, 30, 1), Error);  // not loaded
}

TEST_F(decoding_relaxed, RelaxationSavesForwards) {
  const double exact = run_images(ctx(), by_name("sjd"), {{"window", "8"}}, 20, 60).nfe_per_image;
  const double relaxed =
      run_images(ctx(), by_name("lantern"), {{"window", "8"}, {"k", "3"}, {"delta", "0.5"}}, 20, 60).nfe_per_image;
  EXPECT_LT(relaxed, exact);
}

// GSD's group of one (--group 0, or a gap no neighbour is within) is the exact test: P(G) / Q(G)
// = p(x) / q(x) on the same random numbers, and the same residual. Every method that takes a rule.
TEST_F(decoding_relaxed, GsdWithoutNeighboursIsTheExactMethod) {
  const std::vector<std::pair<std::string, MethodOptions>> runs = {{"sjd", {{"window", "4"}}},
                                                                   {"scd-mc", {{"window", "4"}}},
                                                                   {"scd-gs", {{"window", "4"}}},
                                                                   {"sd", {{"window", "3"}}}};
  for (const auto& [method, base] : runs)
    for (const MethodOptions& lone : std::vector<MethodOptions>{{{"group", "0"}}, {{"gap", "0"}}}) {
      MethodOptions gsd = base;
      gsd.insert(lone.begin(), lone.end());
      gsd["accept"] = "gsd";
      expect_same_run(run_images(ctx(), by_name(method), base, 5, 12, true),
                      run_images(ctx(), by_name(method), gsd, 5, 12, true), method + " " + lone.begin()->first);
    }
  expect_same_run(run_images(ctx(), by_name("zipar"), {{"window", "1"}, {"verify", "exact"}}, 5, 12, true),
                  run_images(ctx(), by_name("zipar"), {{"window", "1"}, {"verify", "gsd"}, {"group", "0"}}, 5, 12,
                             true),
                  "zipar");
}

// Larger groups accept more: with both filters off, a group's mass ratio passes more drafts.
TEST_F(decoding_relaxed, GsdGroupsSaveForwards) {
  const double exact = run_images(ctx(), by_name("sjd"), {{"window", "8"}}, 20, 60).nfe_per_image;
  const double grouped =
      run_images(ctx(), by_name("sjd"), {{"window", "8"}, {"accept", "gsd"}, {"gap", "1"}, {"distance", "4"}}, 20, 60)
          .nfe_per_image;
  EXPECT_LT(grouped, exact);
}

// A rule's options belong to it; a rule that judges rows only cannot judge eagle's trees.
TEST_F(decoding_relaxed, RuleOptionsBelongToTheirRule) {
  EXPECT_THROW(run_images(ctx(), by_name("sjd"), {{"group", "3"}}, 0, 1), Error);
  EXPECT_THROW(run_images(ctx(), by_name("sjd"), {{"accept", "gsd"}, {"delta", "0.1"}}, 0, 1), Error);
  EXPECT_THROW(run_images(ctx(), by_name("zipar"), {{"verify", "none"}, {"gap", "0.1"}}, 0, 1), Error);
  EXPECT_THROW(run_images(ctx(), by_name("lantern"), {{"group", "3"}}, 0, 1), Error);
  EXPECT_FALSE(find_strategy("scd-mc").lossless_for({{"accept", "gsd"}}));
  EXPECT_FALSE(find_strategy("zipar").lossless_for({{"verify", "gsd"}}));
  EXPECT_TRUE(find_strategy("zipar").lossless_for({{"verify", "exact"}}));
}

// From the same state (the first step of an image, same seed) a relaxed step accepts a superset of
// what the exact step accepts, and the drafts it carries past its commit point must be the exact
// coupled successors, i.e. the exact run's drafts for the same positions at step two. Carrying the
// relaxed resolution instead (the fault) keeps drafts the exact test would have replaced.
TEST_F(decoding_relaxed, CoupledRelaxedDecodingCarriesTheExactSuccessor) {
  auto scd = [](bool fault) -> testing::Factory {
    Faults f;
    f.relaxed_successor = fault;
    return [f](const ModelSet& m, const StrategyInputs& in) -> std::unique_ptr<Strategy> {
      testing::ScopedFaults with(f);
      return make_strategy("scd-mc", m, in);
    };
  };
  const MethodOptions window = {{"window", "8"}, {"init", "random"}};
  const MethodOptions relaxed = {
      {"window", "8"}, {"init", "random"}, {"accept", "lantern"}, {"k", "8"}, {"delta", "0.5"}};
  const int images = 40;
  const testing::Sample exact = run_images(ctx(), by_name("scd-mc"), window, 100, images, true);
  auto mismatches = [&](bool fault) {
    const testing::Sample r = run_images(ctx(), scd(fault), relaxed, 100, images, true);
    int64_t differ = 0, compared = 0;
    for (int i = 0; i < images; ++i) {
      const auto &er = r.events[static_cast<size_t>(i)], &ee = exact.events[static_cast<size_t>(i)];
      if (er.size() < 2 || ee.size() < 2) continue;
      EXPECT_GE(er[0].committed, ee[0].committed) << "image " << i << ": relaxed accepted less than exact";
      auto step2 = [](const StepEvent& e, int32_t n) {
        for (size_t m = 0; m < e.proposed.size(); ++m)
          if (e.proposed[m] == n) return e.proposed_tokens[m];
        return -1;
      };
      for (int32_t n = static_cast<int32_t>(er[0].committed); n < static_cast<int32_t>(er[0].proposed.size()); ++n) {
        ++compared;
        differ += step2(er[1], n) != step2(ee[1], n);
      }
    }
    EXPECT_GT(compared, 0);
    return differ;
  };
  EXPECT_EQ(mismatches(false), 0);
  EXPECT_GT(mismatches(true), 0) << "no image had a relaxed-only acceptance past the commit point: no power";
}

}  // namespace
}  // namespace vkspec
