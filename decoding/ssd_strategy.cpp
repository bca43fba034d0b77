#include "decoding/ssd_strategy.h"

#include "common/error.h"

namespace vkspec {

WindowOptions parse_ssd_options(const MethodOptions& o, const GptConfig& target) {
  WindowOptions w = parse_window_options(o, "ssd");
  w.window = option_int(o, "ssd", "rows", 2, 1, target.grid_size) * target.grid_size;
  return w;
}

SsdStrategy::SsdStrategy(const ModelSet& models, const StrategyInputs& in)
    : WindowStrategy(models, in, "ssd", DraftRule::Coupled,
                     parse_ssd_options(in.options, models.target ? models.target->config() : GptConfig{}), {}) {}

}  // namespace vkspec
