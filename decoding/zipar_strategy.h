#pragma once
// ZipAR (He et al. 2024, "ZipAR: Parallel Auto-regressive Image Generation through Spatial
// Locality"): rows decoded in parallel. Row r starts once row r-1 has w tokens and stays at least
// w tokens behind it (r-1 must hold column c + w - 1 before r samples column c); every forward
// feeds one new token per active row at its true 2D position and samples each row's next token.
//
// Attention sees only what is generated: each query sees the slots below its own sequence position
// whose fed token is committed (plus its own). Row r's first token is predicted by the query at the
// slot of token (r-1, W-1), which usually does not exist yet; that query is fed a placeholder (the
// token above it, (r-2, W-1), when decoded, else the latest token of row r-1) and its slot stays
// hidden from every other query until the real token exists and is fed there, in the next forward
// after row r-1 completes (a query whose logits are not used). The public code lets queries attend
// to unfilled cache slots and never repairs the placeholder's key and value.
//
// Token n is sampled with the Philox key (seed, n, Sample), as ar does: with w = W (a row starts
// when the previous one is complete) zipar is exactly ar, token for token.
// Option: --window w (default 4; 1..W). With --batch, ZipArBatchStrategy (zipar_batch_strategy.h).
#include <vector>

#include "decoding/strategy.h"
#include "decoding/zipar_rows.h"

namespace vkspec {

// The window a run uses: --window, else 4 (at most the grid width W).
int64_t zipar_window(const OptionValues& o, int64_t W);

class ZipArStrategy : public Strategy {
 public:
  ZipArStrategy(const ModelSet& models, const StrategyInputs& in, int64_t window);

 protected:
  void decode(StepEvent& e) override;

 private:
  ZipArRows rows_;
  Tensor positions_, probs_, tokens_;  // per query: Philox position (upload), p, sampled token
};

}  // namespace vkspec
