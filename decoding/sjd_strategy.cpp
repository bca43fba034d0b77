#include "decoding/sjd_strategy.h"

namespace vkspec {

SjdStrategy::SjdStrategy(const ModelSet& models, const StrategyInputs& in, const Faults& faults)
    : WindowStrategy(models, in, "sjd", DraftRule::Fresh, parse_window_options(in.options, "sjd"), faults) {}

}  // namespace vkspec
