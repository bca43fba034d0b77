#include "decoding/lantern_strategy.h"

#include "decoding/sd_strategy.h"
#include "common/error.h"

namespace vkspec {
namespace {

MethodOptions without_drafter(const MethodOptions& o) {
  MethodOptions r = o;
  r.erase("drafter");
  return r;
}

StrategyInputs jacobi_inputs(const StrategyInputs& in) {
  StrategyInputs r = in;
  r.options = without_drafter(in.options);
  return r;
}

}  // namespace

bool lantern_uses_drafter_model(const MethodOptions& o) {
  auto it = o.find("drafter");
  return it != o.end() && it->second != "jacobi";
}

LanternJacobiStrategy::LanternJacobiStrategy(const ModelSet& models, const StrategyInputs& in)
    : WindowStrategy(models, jacobi_inputs(in), "lantern", DraftRule::Fresh,
                     parse_window_options(without_drafter(in.options), "lantern", AcceptRule::Kind::Lantern), {}) {}

std::unique_ptr<Strategy> make_lantern(const ModelSet& models, const StrategyInputs& in) {
  auto it = in.options.find("drafter");
  if (it != in.options.end() && it->second != "jacobi" && it->second != "model")
    throw Error("lantern: --drafter must be jacobi or model, got '" + it->second + "'");
  if (!lantern_uses_drafter_model(in.options)) return std::make_unique<LanternJacobiStrategy>(models, in);
  if (in.options.count("init")) throw Error("lantern: --init applies to --drafter jacobi only");
  StrategyInputs sd = in;
  sd.options = without_drafter(in.options);
  return std::make_unique<SdStrategy>(models, sd, Faults{}, "lantern");
}

}  // namespace vkspec
