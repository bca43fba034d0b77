#pragma once
// Spatial block drafting in the manner of SSD (Xiang et al. 2026): the window covers whole rows
// (--rows R, default 2: the current row and the next); positions entering it are drafted by the
// draft heads (ModelSet::heads): the horizontal heads continue the current row, the vertical heads
// fill the rows below from the hidden states one and two rows up. Every step verifies the block in
// one forward; rejected tokens are corrected in place by maximal coupling (the next draft is the
// row's resolved token, as scd-mc), and a draft that has been re-verified --rounds times (default
// 3) without being committed is replaced by the newest head proposal for its position.
// Lossless: every draft is a sample of the q it is verified against, drawn with randomness of its
// own position (decoding/window_strategy.h).
#include "decoding/window_strategy.h"

namespace vkspec {

class SsdStrategy : public WindowStrategy {
 public:
  SsdStrategy(const ModelSet& models, const StrategyInputs& in);
  const char* name() const override { return "ssd"; }
};

WindowOptions parse_ssd_options(const MethodOptions& o, const GptConfig& target);

}  // namespace vkspec
