// PJD (decoding/pjd_strategy.h): the staircase's windows and the row-causal mask as pure rules,
// then the strategy on the tiny 3x3 model: with one row at a time and a window of one query it is
// ar token for token (same keys, same visibility); with parallel rows its events stay consistent,
// several rows run in one forward, and the mask option changes what lower rows see.
#include <gtest/gtest.h>

#include <random>

#include "decoding/pjd_schedule.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::kTinyGrid;
using testing::run_images;

TEST(pjd_schedule, WindowsFollowTheStaircase) {
  PjdSchedule s(16, 8, 8);
  ASSERT_EQ(s.windows().size(), 1u);
  EXPECT_EQ(s.windows()[0].queries, 8);
  EXPECT_TRUE(s.windows()[0].top);
  s.commit(0, 7);
  s.activate_rows();
  EXPECT_FALSE(s.started(1));  // 7 < lag
  s.commit(0, 1);
  s.activate_rows();
  ASSERT_TRUE(s.started(1));
  std::vector<PjdWindow> w = s.windows();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].queries, 8);  // min(16 - 8, 8)
  EXPECT_EQ(w[1].queries, 8);  // min(8 - 0, 8)
  EXPECT_FALSE(w[1].top);
  s.commit(0, 3);
  s.commit(1, 6);
  w = s.windows();
  EXPECT_EQ(w[0].queries, 5);  // tokens left in row 0
  EXPECT_EQ(w[1].queries, 5);  // lead of row 0 over row 1
  s.commit(1, 5);              // row 1 has caught up with row 0: it waits
  w = s.windows();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].row, 0);
  s.commit(0, 5);  // row 0 complete: row 1 is the top row
  s.activate_rows();
  w = s.windows();
  EXPECT_EQ(w[0].row, 1);
  EXPECT_TRUE(w[0].top);
  EXPECT_EQ(w[0].queries, 5);
  EXPECT_THROW(s.commit(1, 6), Error);
  EXPECT_THROW(PjdSchedule(16, 8, 17), Error);
  EXPECT_THROW(PjdSchedule(16, 0, 8), Error);
  EXPECT_THROW(PjdSchedule(16, 8, 8, 0), Error);
  EXPECT_THROW(PjdSchedule(16, 8, 8, 17), Error);
}

TEST(pjd_schedule, LeadKeepsLowerRowsBehind) {
  PjdSchedule s(16, 8, 4, 3);
  s.commit(0, 4);
  s.activate_rows();
  std::vector<PjdWindow> w = s.windows();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].queries, 2);  // columns 0 and 1: the row above has 4 >= 1 + 3 and 2 + 3 - 1
  s.commit(1, 2);
  EXPECT_EQ(s.windows().size(), 1u);  // column 2 needs 5 tokens above: row 1 waits
  s.commit(0, 1);
  w = s.windows();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].queries, 1);
}

// Under random commits no window below the top row predicts a column c before the row above has
// c + lead tokens, and rows start exactly when the row above reaches the lag.
TEST(pjd_schedule, NoRowRunsAheadOfTheRowAbove) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t W = 16, lag = 1 + static_cast<int64_t>(rng() % W), window = 1 + static_cast<int64_t>(rng() % 10);
    const int64_t lead = trial % 2 ? 1 : 1 + static_cast<int64_t>(rng() % W);
    PjdSchedule s(W, window, lag, lead);
    while (!s.done()) {
      const std::vector<PjdWindow> ws = s.windows();
      ASSERT_FALSE(ws.empty());
      ASSERT_TRUE(ws[0].top);
      for (const PjdWindow& w : ws) {
        EXPECT_LE(w.queries, window);
        EXPECT_LE(w.first + w.queries, w.top ? W : s.committed(w.row - 1) - lead + 1);
        if (w.row > 0) {
          EXPECT_GE(s.committed(w.row - 1), lag);
        }
      }
      for (const PjdWindow& w : ws)  // the top row commits at least one token, the others any prefix
        s.commit(w.row, w.top ? 1 + static_cast<int64_t>(rng() % w.queries) : static_cast<int64_t>(rng() % w.queries));
      s.activate_rows();
    }
  }
}

TEST(pjd_visibility, RowCausalHidesOtherRowsDrafts) {
  // Slots: 0..9 committed and valid; window 0 = anchor 10 + drafts 11, 12; window 1 = anchor 20 +
  // drafts 21, 22; a placeholder at 30 (window 2); slot 15 holds a rejected draft of an earlier step.
  std::vector<bool> valid(40, false);
  for (int s = 0; s < 10; ++s) valid[static_cast<size_t>(s)] = true;
  for (PjdMask mask : {PjdMask::RowCausal, PjdMask::Full}) {
    PjdVisibility v(mask, valid);
    v.add(10, 0, PjdFeed::Committed);
    v.add(11, 0, PjdFeed::Draft);
    v.add(12, 0, PjdFeed::Draft);
    v.add(20, 1, PjdFeed::Committed);
    v.add(21, 1, PjdFeed::Draft);
    v.add(22, 1, PjdFeed::Draft);
    v.add(30, 2, PjdFeed::Placeholder);
    v.add(31, 2, PjdFeed::Draft);
    EXPECT_TRUE(v.sees(2, 11));  // own window's earlier draft
    EXPECT_TRUE(v.sees(5, 21));
    EXPECT_TRUE(v.sees(3, 10));  // another row's anchor is a committed token
    EXPECT_TRUE(v.sees(5, 3));
    EXPECT_FALSE(v.sees(5, 15));                      // a stale draft
    EXPECT_FALSE(v.sees(7, 30));                      // a placeholder, even in its own window
    EXPECT_EQ(v.sees(4, 11), mask == PjdMask::Full);  // window 1 and window 0's drafts
    EXPECT_EQ(v.sees(7, 22), mask == PjdMask::Full);
    EXPECT_TRUE(v.valid()[20]);
    EXPECT_FALSE(v.valid()[21]);
    EXPECT_FALSE(v.valid()[30]);
  }
}

class decoding_pjd : public testing::VulkanTest {};

// One row at a time (lag = W) and a window of one query: every forward samples the next raster
// token from the full committed prefix with ar's key (seed, n, Sample).
TEST_F(decoding_pjd, OneRowOneQueryIsAr) {
  const testing::Sample ar = run_images(ctx(), by_name("ar"), {}, 21, 10);
  const testing::Sample pjd =
      run_images(ctx(), by_name("pjd"), {{"window", "1"}, {"lag", std::to_string(kTinyGrid)}}, 21, 10);
  EXPECT_EQ(ar.grids, pjd.grids);
  EXPECT_EQ(pjd.nfe_per_image, static_cast<double>(kTinyGrid * kTinyGrid));
  // --lag past the grid width is clamped to it.
  const testing::Sample clamped = run_images(ctx(), by_name("pjd"), {{"window", "1"}, {"lag", "100"}}, 21, 10);
  EXPECT_EQ(ar.grids, clamped.grids);
}

// Parallel rows: events consistent (run_images checks every step), several rows in one forward,
// fewer forwards than tokens, and the full mask changes what lower rows see.
TEST_F(decoding_pjd, RowsRunInParallel) {
  const MethodOptions opts = {{"window", "3"}, {"lag", "1"}};
  const testing::Sample s = run_images(ctx(), by_name("pjd"), opts, 40, 8, true);
  EXPECT_LT(s.nfe_per_image, static_cast<double>(kTinyGrid * kTinyGrid));
  bool two_rows = false, lower_row_commits = false;
  for (const auto& image : s.events)
    for (const StepEvent& e : image) {
      std::vector<bool> rows(kTinyGrid, false);
      for (int32_t n : e.proposed) rows[static_cast<size_t>(n / kTinyGrid)] = true;
      two_rows = two_rows || std::count(rows.begin(), rows.end(), true) >= 2;
      int64_t first_row = kTinyGrid;
      for (int32_t n : e.proposed) first_row = std::min<int64_t>(first_row, n / kTinyGrid);
      for (int32_t n : e.accepted) lower_row_commits = lower_row_commits || n / kTinyGrid > first_row;
      EXPECT_FALSE(e.accepted.empty() && e.resampled.empty()) << "a step committed nothing";
      // One group per active row's window (the viewer's outline), each within one row, together
      // the step's proposed positions.
      std::vector<int32_t> grouped;
      for (const std::vector<int32_t>& g : e.groups) {
        ASSERT_FALSE(g.empty());
        for (int32_t n : g) EXPECT_EQ(n / kTinyGrid, g.front() / kTinyGrid);
        grouped.insert(grouped.end(), g.begin(), g.end());
      }
      std::vector<int32_t> proposed = e.proposed;
      std::sort(grouped.begin(), grouped.end());
      std::sort(proposed.begin(), proposed.end());
      EXPECT_EQ(grouped, proposed);
    }
  EXPECT_TRUE(two_rows);
  EXPECT_TRUE(lower_row_commits);
  const testing::Sample again = run_images(ctx(), by_name("pjd"), opts, 40, 8);
  EXPECT_EQ(s.grids, again.grids);
  MethodOptions full = opts;
  full["mask"] = "full";
  const testing::Sample f = run_images(ctx(), by_name("pjd"), full, 40, 8);
  EXPECT_NE(s.grids, f.grids);
  // Every image completes with other windows and lags.
  for (const MethodOptions& o : std::vector<MethodOptions>{
           {{"window", "2"}, {"lag", "2"}},
           {{"window", "8"}},
           {{"window", "3"}, {"lag", "2"}, {"lead", "2"}, {"lower-rows", "resolve"}, {"init", "above"}}})
    run_images(ctx(), by_name("pjd"), o, 60, 3);
  // One row at a time, each row's drafts are the row above's tokens under --init above.
  const MethodOptions rows = {{"window", "3"}, {"lag", std::to_string(kTinyGrid)}};
  MethodOptions above = rows;
  above["init"] = "above";
  EXPECT_NE(run_images(ctx(), by_name("pjd"), rows, 40, 8).grids,
            run_images(ctx(), by_name("pjd"), above, 40, 8).grids);
}

// Our variant's limit: with every row resolving, one query per row and the row above lag = lead
// tokens ahead, each row commits one token a forward sampled with ar's key, as ZipAR does.
TEST_F(decoding_pjd, ResolvedRowsOfOneQueryAreZipAr) {
  for (const std::string w : {"1", "2"}) {
    const testing::Sample zipar = run_images(ctx(), by_name("zipar"), {{"window", w}}, 5, 6);
    const testing::Sample pjd =
        run_images(ctx(), by_name("pjd"), {{"window", "1"}, {"lower-rows", "resolve"}, {"lead", w}, {"lag", w}}, 5, 6);
    EXPECT_EQ(zipar.grids, pjd.grids) << "window " << w;
    EXPECT_EQ(zipar.nfe_per_image, pjd.nfe_per_image) << "window " << w;
  }
  // Resolving rows advance at least one token a forward: fewer forwards than the paper's rule.
  const MethodOptions paper = {{"window", "3"}, {"lag", "1"}};
  MethodOptions resolve = paper;
  resolve["lower-rows"] = "resolve";
  EXPECT_LT(run_images(ctx(), by_name("pjd"), resolve, 40, 8).nfe_per_image,
            run_images(ctx(), by_name("pjd"), paper, 40, 8).nfe_per_image);
  // A relaxed rule judges the drafts instead of the exact test.
  MethodOptions relaxed = paper;
  relaxed["accept"] = "lantern";
  relaxed["delta"] = "1";
  EXPECT_NE(run_images(ctx(), by_name("pjd"), relaxed, 40, 8).grids,
            run_images(ctx(), by_name("pjd"), paper, 40, 8).grids);
}

TEST_F(decoding_pjd, OptionsAreChecked) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  for (const MethodOptions& o : std::vector<MethodOptions>{{{"window", "0"}},
                                                           {{"lag", "0"}},
                                                           {{"mask", "maybe"}},
                                                           {{"init", "left"}},
                                                           {{"window", "x"}},
                                                           {{"lead", "0"}},
                                                           {{"lower-rows", "all"}},
                                                           {{"accept", "gsd"}, {"delta", "0.1"}}}) {
    in.options = o;
    EXPECT_THROW(make_strategy("pjd", testing::tiny_models(ctx()).set, in), Error) << o.begin()->first;
  }
  EXPECT_FALSE(find_strategy("pjd").lossless_for({}));
  EXPECT_FALSE(find_strategy("pjd").lossless_for({{"accept", "exact"}}));
}

}  // namespace
}  // namespace vkspec
