#pragma once
// ZipAR with verification (`zipar --verify exact|lantern`): our rule toward the adaptive window
// with rejection sampling that the ZipAR paper describes and its code lacks (not a transcription
// of the paper's rule; docs/methods.md, `zipar`). Parallel rows draft as in plain zipar (zipar_strategy.h), but a
// token sampled without its full raster context is a draft, kept with the distribution it was
// sampled from; each forward also verifies the run of drafts at the raster frontier c under the
// full causal context (queries for c .. c + D, fed the committed token and the drafts), with the
// acceptance rule --verify names (decoding/accept_rule.h): exact (u < min(1, p/q), residual
// resampling; lossless) or a lossy one (lantern, gsd). The first rejection is resampled and every draft after it is
// dropped (it may have seen the rejected token); when the whole run passes, the row after it is an exact sample. Drafts
// keep their own Philox randomness, so with --verify exact the output is ar's distribution.
#include <vector>

#include "decoding/speculative_base.h"

namespace vkspec {

// zipar's --verify: "none" (the paper: no verification) or an acceptance rule.
AcceptRuleSlot zipar_verify_slot();

class ZipArVerifyStrategy : public Strategy {
 public:
  // window: as plain zipar's; o: zipar's options (--verify and the rule's).
  ZipArVerifyStrategy(const ModelSet& models, const StrategyInputs& in, int64_t window, const OptionValues& o);

  // The most queries a forward runs on a grid of width W: W + 1 verification rows, one per
  // parallel row, and as many repaired slots.
  static int64_t max_queries(int64_t W) { return 3 * W + 1; }

 protected:
  void decode(StepEvent& e) override;

 private:
  // One forward's queries: rows [0, verified) verify the frontier's D drafts (and the row after
  // them), rows [verified, sampled_end) draft for the parallel rows, the rest re-feed stale slots.
  struct Plan {
    int64_t c = 0, D = 0, verified = 0, sampled_end = 0;
    std::vector<int64_t> slots, predicts;
    std::vector<int32_t> fed;  // kCondition for the condition query
    std::vector<bool> placeholder;
  };
  Plan plan() const;
  void add_parallel_rows(Plan& p) const;
  void add_stale_slots(Plan& p) const;
  // Records the forward, the drafts' sampling and the frontier's verification of `p`.
  void record(const Plan& p, uint32_t round);
  // Commits the verified prefix and keeps (or, after a rejection, drops) the new drafts.
  void commit(const Plan& p, const std::vector<uint32_t>& res, StepEvent& e);

  int32_t token_at(int64_t n) const;  // committed token, current draft, or -1
  int64_t progress(int64_t r) const;  // decided-or-drafted tokens from the left of row r

  int64_t W_, window_, cls_;
  std::unique_ptr<AcceptRule> accept_;
  std::vector<int32_t> draft_;     // per position: current draft, -1 none
  std::vector<int32_t> slot_fed_;  // per slot: the token fed when its key/value were written
  Tensor q_, p_, zeros_, positions_, row_tokens_, out_;
};

}  // namespace vkspec
