#pragma once
// Vanilla autoregressive sampling, one token per target forward: the reference every other
// method is compared with, seed by seed (token n is drawn with the Philox key (seed, n, Sample)).
#include "decoding/strategy.h"
#include "engine/model/kv_cache.h"

namespace vkspec {

class ArStrategy : public Strategy {
 public:
  ArStrategy(const ModelSet& models, const StrategyInputs& in);
  const char* name() const override { return "ar"; }
  StepEvent step() override;

 private:
  int64_t rows_;  // 2 with CFG
  KvCache cache_;
  Tensor positions_, probs_, token_;  // host-visible positions/token; probs on the device
  CommandStream stream_;              // reused by every step
};

}  // namespace vkspec
