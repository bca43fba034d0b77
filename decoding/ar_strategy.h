#pragma once
// Vanilla autoregressive sampling, one token per target forward: the reference every other
// method is compared with, seed by seed (token n is drawn with the Philox key (seed, n, Sample)).
// --tokens-per-submit K records K forwards per submit, each fed the token the previous one
// sampled by a copy on the device, so the host waits once per K tokens instead of once per token
// (where a forward is mostly latency, as the shipped model's on a GPU); the tokens are the same.
#include "decoding/strategy.h"

namespace vkspec {

class ArStrategy : public Strategy {
 public:
  ArStrategy(const ModelSet& models, const StrategyInputs& in, int64_t tokens_per_submit = 1);

 protected:
  void decode(StepEvent& e) override;

 private:
  // Records and runs the forwards of tokens first .. first + K - 1 in one submit; reads back their
  // tokens for the next K steps.
  void record_and_run(int64_t first);

  int64_t per_submit_;
  Tensor probs_, tokens_;  // probabilities on the device, the sampled tokens read back
  std::vector<uint32_t> host_tokens_;  // sampled by the last submit, handed out from next_
  size_t next_ = 0;
};

}  // namespace vkspec
