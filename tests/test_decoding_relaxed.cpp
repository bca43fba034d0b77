// Relaxed acceptance (LANTERN) and the codebook neighbour table it reads: the table's order and
// cache; delta = 0 is exactly the lossless method it relaxes (same tokens, same events); delta = 1
// over the whole codebook accepts every draft; in between, fewer forwards than exact acceptance;
// coupled drafting under relaxation carries the exact successor forward.
#include <gtest/gtest.h>

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
                  run_images(ctx(), by_name("scd-mc"), with(zero, {{"window", "4"}, {"accept", "lantern"}}), 5, 12, true),
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

TEST_F(decoding_relaxed, RelaxationSavesForwards) {
  const double exact = run_images(ctx(), by_name("sjd"), {{"window", "8"}}, 20, 60).nfe_per_image;
  const double relaxed =
      run_images(ctx(), by_name("lantern"), {{"window", "8"}, {"k", "3"}, {"delta", "0.5"}}, 20, 60).nfe_per_image;
  EXPECT_LT(relaxed, exact);
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
  const MethodOptions relaxed = {{"window", "8"}, {"init", "random"}, {"accept", "lantern"}, {"k", "8"}, {"delta", "0.5"}};
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
