#include "decoding/scd_strategy.h"

#include "common/error.h"

namespace vkspec {
namespace {

DraftRule rule_for(const std::string& method) {
  if (method == "scd-mc") return DraftRule::Coupled;
  if (method == "scd-gs") return DraftRule::SharedGumbel;
  throw Error("ScdStrategy: unknown variant '" + method + "' (scd-mc or scd-gs)");
}

}  // namespace

ScdStrategy::ScdStrategy(const std::string& method, const ModelSet& models, const StrategyInputs& in,
                         const Faults& faults)
    : WindowStrategy(models, in, method == "scd-gs" ? "scd-gs" : "scd-mc", rule_for(method),
                     parse_window_options(in.options, method), faults),
      gumbel_(method == "scd-gs") {}

}  // namespace vkspec
