#pragma once
// Vanilla autoregressive sampling, one token per target forward: the reference every other
// method is compared with, seed by seed (token n is drawn with the Philox key (seed, n, Sample)).
// --tokens-per-submit K records K forwards per submit, each fed the token the previous one
// sampled by a copy on the device, so the host waits once per K tokens instead of once per token
// (where a forward is mostly latency, as the shipped model's on a GPU); the tokens are the same.
#include "decoding/batch_strategy.h"
#include "decoding/strategy.h"
#include "engine/ops/sampler.h"

namespace vkspec {

// Records the forwards of tokens first .. first + K - 1 of every image of t (K = tokens.rows /
// images) in one stream, each fed the tokens the one before sampled (copied on the device); image
// g's token k goes to tokens[k * images + g]. last: each image's token first - 1 (empty when
// first = 0). seeds: u32 [images, 2] with several images (each under its own seed), else empty.
void record_ar_forwards(TargetSession& t, int64_t first, const std::vector<uint32_t>& last,
                        const ops::SamplerParams& params, const TensorView& seeds, const TensorView& probs,
                        const TensorView& tokens);

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
  Tensor probs_, tokens_;              // probabilities on the device, the sampled tokens read back
  std::vector<uint32_t> host_tokens_;  // sampled by the last submit, handed out from next_
  size_t next_ = 0;
};

// ar for several images in every forward, in lockstep (all images are at the same position at
// every step): the same tokens as ArStrategy's, image by image.
class ArBatchStrategy : public BatchStrategy {
 public:
  ArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in, int64_t tokens_per_submit = 1);

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  int64_t per_submit_, committed_ = 0;
  Tensor probs_, tokens_, seeds_;
  std::vector<uint32_t> host_tokens_;  // [K * images] from the last submit
  int64_t next_ = 0, submitted_ = 0;   // forwards of the last submit handed out / recorded
};

}  // namespace vkspec
