#pragma once
// Speculative Jacobi Decoding (Teng et al. 2024, "Accelerating Auto-regressive Text-to-Image
// Generation with Training-free Speculative Jacobi Decoding"): a window of L drafts verified with
// the probabilistic test min(1, p/q), stopping at the first rejection, which is resampled from
// norm(max(p - q, 0)); the drafts after it are resampled from this step's p (which becomes their
// q). Options: --window L (default 16), --init random|left|above (default above).
#include "decoding/window_strategy.h"

namespace vkspec {

class SjdStrategy : public WindowStrategy {
 public:
  SjdStrategy(const ModelSet& models, const StrategyInputs& in, const Faults& faults = {});
  const char* name() const override { return "sjd"; }
};

}  // namespace vkspec
