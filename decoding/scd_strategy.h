#pragma once
// Speculative Coupled Decoding (So et al., ICML 2026): SJD's window and test, but every position
// of the window is verified (vectorised, no break) and the next draft of each position is coupled
// with its previous one, so that drafts stop changing once the prefix they depend on settles.
//  - scd-mc, maximal coupling: the next draft is the row's resolved token (the draft when
//    accepted, else the residual sample), an exact sample of p that equals the previous draft with
//    probability 1 - TV(p, q).
//  - scd-gs, Gumbel sharing: the next draft is argmax(log p + g) with Gumbel noise g keyed only by
//    (seed, position) in the counter-based RNG, shared by every iteration without a stored table;
//    consecutive drafts collide with probability >= (1 - TV) / (1 + TV).
// Options as SJD: --window L (default 16), --init random|left|above (default above).
#include "decoding/window_strategy.h"

namespace vkspec {

class ScdStrategy : public WindowStrategy {
 public:
  // method: "scd-mc" or "scd-gs".
  ScdStrategy(const std::string& method, const ModelSet& models, const StrategyInputs& in, const Faults& faults = {});
  const char* name() const override { return gumbel_ ? "scd-gs" : "scd-mc"; }

 private:
  bool gumbel_;
};

}  // namespace vkspec
