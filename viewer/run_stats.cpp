#include "viewer/run_stats.h"

#include <algorithm>

namespace vkspec::viewer {

RunStats run_stats(const std::vector<std::shared_ptr<const StepFrame>>& frames, size_t upto, int64_t tokens) {
  RunStats s;
  s.tokens = tokens;
  if (frames.empty()) return s;
  upto = std::min(upto, frames.size() - 1);
  double wall = 0;
  for (size_t i = 0; i <= upto; ++i) {
    const StepEvent& e = frames[i]->event;
    s.accepted += static_cast<int64_t>(e.accepted.size());
    s.rejected += static_cast<int64_t>(e.rejected.size());
    s.resampled += static_cast<int64_t>(e.resampled.size());
    wall += e.wall_ms;
    s.device_ms += e.device_ms;
  }
  const StepEvent& last = frames[upto]->event;
  s.steps = static_cast<int64_t>(upto + 1);
  s.nfe = last.nfe;
  s.draft_forwards = last.draft_forwards;
  s.committed = last.committed;
  s.accepted_length = s.nfe ? static_cast<double>(s.committed) / static_cast<double>(s.nfe) : 0.0;
  if (s.accepted + s.rejected > 0)
    s.acceptance_rate = static_cast<double>(s.accepted) / static_cast<double>(s.accepted + s.rejected);
  s.mean_step_ms = wall / static_cast<double>(s.steps);
  s.last_step_ms = last.wall_ms;
  return s;
}

}  // namespace vkspec::viewer
