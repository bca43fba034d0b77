#pragma once
// Vanilla autoregressive sampling, one token per target forward: the reference every other
// method is compared with, seed by seed (token n is drawn with the Philox key (seed, n, Sample)).
#include "decoding/strategy.h"

namespace vkspec {

class ArStrategy : public Strategy {
 public:
  ArStrategy(const ModelSet& models, const StrategyInputs& in);

 protected:
  void decode(StepEvent& e) override;

 private:
  Tensor probs_, token_;  // probabilities on the device, the sampled token read back
};

}  // namespace vkspec
