#pragma once
// The live statistics of a run at the displayed step, from its events.
#include <cstdint>
#include <memory>
#include <vector>

#include "viewer/run_record.h"

namespace vkspec::viewer {

struct RunStats {
  int64_t steps = 0;  // events up to and including the displayed one
  int64_t nfe = 0, draft_forwards = 0, committed = 0, tokens = 0;
  int64_t accepted = 0, rejected = 0, resampled = 0;  // summed over the steps
  double accepted_length = 0;                         // committed tokens per target forward
  double acceptance_rate = -1;                        // accepted / verified; -1 when nothing was verified
  double mean_step_ms = 0, last_step_ms = 0, device_ms = 0;
};

// frames[0..upto] (upto clamped to the last frame).
RunStats run_stats(const std::vector<std::shared_ptr<const StepFrame>>& frames, size_t upto, int64_t tokens);

}  // namespace vkspec::viewer
