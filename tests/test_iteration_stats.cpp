// Per-iteration statistics of Jacobi window decoding (decoding/iteration_stats.h) on hand-written
// events: visits counted per position, the row without a draft left out, collisions between a
// position's consecutive drafts, acceptance among the rows a step decided.
#include <gtest/gtest.h>

#include "common/error.h"
#include "decoding/iteration_stats.h"

namespace vkspec {
namespace {

StepEvent step(int64_t n, std::vector<int32_t> proposed, std::vector<int32_t> tokens, std::vector<int32_t> accepted,
               std::vector<int32_t> rejected) {
  StepEvent e;
  e.step = n;
  e.proposed = std::move(proposed);
  e.proposed_tokens = std::move(tokens);
  e.accepted = std::move(accepted);
  e.rejected = std::move(rejected);
  e.resampled = e.rejected;
  return e;
}

// Window 2 over 5 positions.
//  step 0: drafts at 0, 1 (tokens 5, 6), row 2 without a draft; 0 rejected, so 1 is undecided.
//  step 1: drafts at 1, 2 (6 again: a collision; 2's first draft), row 3 without one; all accepted.
//  step 2: the draft at 4, its first (the image's last position: no row without a draft), rejected.
std::vector<StepEvent> window_two() {
  return {step(0, {0, 1, 2}, {5, 6, 7}, {}, {0}), step(1, {1, 2, 3}, {6, 7, 1}, {1, 2, 3}, {}),
          step(2, {4}, {2}, {}, {4})};
}

TEST(IterationStats, CountsVisitsCollisionsAndDecidedRows) {
  const IterationStats s = jacobi_iteration_stats(window_two(), 2, 5);
  EXPECT_EQ(s.images, 1);
  // Visit 1: positions 0, 1 (step 0), 2 (step 1), 4 (step 2); visit 2: position 1.
  EXPECT_EQ(s.drafts[0], 4);
  EXPECT_EQ(s.drafts[1], 1);
  EXPECT_EQ(s.decided[0], 3);  // 0 rejected, 2 accepted, 4 rejected; 1 was undecided at visit 1
  EXPECT_EQ(s.accepted[0], 1);
  EXPECT_EQ(s.decided[1], 1);
  EXPECT_EQ(s.accepted[1], 1);
  EXPECT_EQ(s.transitions[0], 1);  // only position 1 came back
  EXPECT_EQ(s.collisions[0], 1);
  EXPECT_DOUBLE_EQ(s.collision_rate(0), 1.0);
  EXPECT_DOUBLE_EQ(s.acceptance_rate(0), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.acceptance_rate(), 2.0 / 4.0);
  EXPECT_EQ(s.collision_rate(1), -1.0);  // nothing counted
}

TEST(IterationStats, AChangedDraftIsNoCollisionAndLateVisitsShareTheLastBucket) {
  std::vector<StepEvent> ev = window_two();
  ev[1].proposed_tokens[0] = 4;
  EXPECT_EQ(jacobi_iteration_stats(ev, 2, 5).collisions[0], 0);

  // Position 0 verified 10 times with the same draft (events no strategy makes: nothing decided).
  std::vector<StepEvent> many;
  for (int k = 0; k < 10; ++k) many.push_back(step(k, {0, 1}, {3, 9}, {}, {}));
  const IterationStats s = jacobi_iteration_stats(many, 1, 2);
  EXPECT_EQ(s.drafts[IterationStats::kVisits - 1], 3);  // visits 8, 9, 10
  EXPECT_EQ(s.transitions[IterationStats::kVisits - 1], 2);
  EXPECT_EQ(s.collisions[IterationStats::kVisits - 1], 2);

  IterationStats sum = s;
  sum.add(s);
  EXPECT_EQ(sum.images, 2);
  EXPECT_EQ(sum.drafts[0], 2);
}

TEST(IterationStats, RefusesStepsThatAreNotAWindow) {
  EXPECT_THROW(jacobi_iteration_stats({step(0, {0, 2}, {1, 1}, {}, {})}, 2, 4), Error);
  EXPECT_THROW(jacobi_iteration_stats({step(0, {3, 4}, {1, 1}, {}, {})}, 2, 4), Error);
  EXPECT_THROW(jacobi_iteration_stats({}, 0, 4), Error);
}

}  // namespace
}  // namespace vkspec
