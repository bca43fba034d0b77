#pragma once
// The registration of the plain window methods (sjd, scd-mc, scd-gs): one image (WindowStrategy)
// or several per forward (WindowBatchStrategy), which is why it sits apart from both.
#include <string>

#include "decoding/strategy_registry.h"
#include "decoding/window_strategy.h"

namespace vkspec {

// The descriptor of a plain window method: `name` drafting with `rule`.
StrategyDescriptor window_method_descriptor(const std::string& name, int order, DraftRule rule, std::string summary,
                                            std::string reference);

}  // namespace vkspec
