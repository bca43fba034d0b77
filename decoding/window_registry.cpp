#include "decoding/window_registry.h"

#include <memory>
#include <utility>
#include <vector>

#include "decoding/window_batch_strategy.h"

namespace vkspec {

StrategyDescriptor window_method_descriptor(const std::string& name, int order, DraftRule rule, std::string summary,
                                            std::string reference) {
  StrategyDescriptor d;
  d.name = name;
  d.order = order;
  d.summary = std::move(summary);
  d.reference = std::move(reference);
  d.options = window_option_specs();
  if (rule != DraftRule::Fresh) d.options.push_back(coupling_strength_spec());
  d.accept_rules = AcceptRuleSlot{};
  d.lossless = [](const OptionValues&) { return true; };  // when the rule is
  d.needs = window_needs;
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return window_max_queries(o); };
  // With --init heads the heads also run on some rows: no fixed cost per forward.
  d.fixed_queries = [](const OptionValues& o) { return o.choice("init") == "heads" ? 0 : window_max_queries(o); };
  d.jacobi_window = [](const OptionValues& o) { return o.integer("window"); };
  d.make = [name, rule](const ModelSet& m, const StrategyInputs& in,
                        const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<WindowStrategy>(name, m, in, rule, parse_window_options(o));
  };
  d.make_batch = [name, rule](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                              int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    return std::make_unique<WindowBatchStrategy>(name, m, in, rule, parse_window_options(o), lanes);
  };
  d.continuous_batching = true;
  return d;
}

}  // namespace vkspec
