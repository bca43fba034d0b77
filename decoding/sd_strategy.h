#pragma once
// Draft-model speculative decoding (Leviathan, Kalman, Matias, ICML 2023, "Fast Inference from
// Transformers via Speculative Decoding"; Chen et al. 2023): a small drafter GPT on the same token
// grid (ModelSet::drafter) samples gamma tokens one by one, the target verifies them in one
// forward, accepts each with min(1, p/q) up to the first rejection and resamples that one from
// norm(max(p - q, 0)); when all are accepted the target's next token comes free.
//
// The whole step is one command buffer: the drafter's forwards each feed the token its sampler
// just wrote (copied on the GPU into the next batch), the drafts are copied into the target's
// batch, then verification; the host reads back the drafts, acceptances and resolved tokens. The
// drafter keeps its own KV cache with the same slot-per-position rollback as the target.
// Options: --window G, the drafts per step (default 4); --accept exact|lantern with --k, --delta.
// LANTERN with a drafter model is this strategy under LANTERN's name with its relaxed rule.
#include <memory>
#include <vector>

#include "decoding/speculative_base.h"

namespace vkspec {

constexpr int64_t kSdDefaultDrafts = 4;

class SdStrategy : public SpeculativeStrategy {
 public:
  // drafts: gamma, the drafter's tokens per step; rule: how the target judges them.
  SdStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, int64_t drafts,
             const AcceptChoice& rule);

 protected:
  void decode(StepEvent& e) override;

 private:
  // Records the drafter's catch-up on committed tokens and its G drafting forwards.
  void record_drafts(int64_t c, int64_t G, uint32_t round);

  KvCache drafter_cache_;
  int64_t drafter_valid_ = 0;  // drafter slots [0, drafter_valid_) hold committed tokens
  // Row 1 + t holds draft t of the step (row 0 is scratch for the re-fed committed token; the row
  // after the last draft stays zero / kNoToken: the target's extra row has no draft).
  Tensor q_;       // f32 [gamma + 2, V]: the drafter's (filtered) distributions
  Tensor tokens_;  // u32 [gamma + 2]: the drafted tokens
};

}  // namespace vkspec
