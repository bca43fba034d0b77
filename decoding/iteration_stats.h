#pragma once
// Per-iteration statistics of Jacobi window decoding (sjd, scd-mc, scd-gs, lantern with Jacobi
// drafts), from a generation's events: what the SCD paper measures to explain coupling. A
// position is verified again and again while it sits in the window; its k-th visit is the k-th
// step that verifies a draft for it. Per visit k:
//  - collision: the draft of visit k + 1 equals the draft of visit k (independent resampling
//    rarely repeats a token; maximal coupling repeats it with probability 1 - TV(p_k, p_k+1));
//  - acceptance: among the rows the step decided (up to and including its first rejection: the
//    event's accepted and rejected positions), the share accepted. Rows after the first rejection
//    are tested too, but the event does not record their verdict.
// Window steps propose rows [c, c + Q): the first min(window, N - c) carry drafts, and a last row
// without one (its token an exact sample) follows while the image has room; only draft rows count.
#include <array>
#include <cstdint>
#include <vector>

#include "decoding/step_event.h"

namespace vkspec {

struct IterationStats {
  static constexpr int kVisits = 8;            // buckets k = 1 .. kVisits - 1, and k >= kVisits in the last
  std::array<int64_t, kVisits> drafts{};       // draft rows verified at visit k
  std::array<int64_t, kVisits> decided{};      // of those, decided by the step (accepted or rejected)
  std::array<int64_t, kVisits> accepted{};     // of those, accepted
  std::array<int64_t, kVisits> transitions{};  // visits k followed by a visit k + 1
  std::array<int64_t, kVisits> collisions{};   // of those, with the same draft at visit k + 1
  int64_t images = 0;

  void add(const IterationStats& o);
  // Shares for bucket k (0-based), or over all visits with k = -1; -1 when nothing was counted.
  double collision_rate(int k = -1) const;
  double acceptance_rate(int k = -1) const;
};

// One image's statistics from its events (in order) under a method that verifies up to `window`
// drafts per step over an image of `image_tokens` positions. Throws Error when an event's rows are
// not a contiguous run of positions (not a Jacobi window method).
IterationStats jacobi_iteration_stats(const std::vector<StepEvent>& events, int64_t window, int64_t image_tokens);

}  // namespace vkspec
