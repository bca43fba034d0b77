#pragma once
// What the speculative strategies share: the target's side of a step on the GPU and the host's
// bookkeeping of what it committed.
//
// A step verifies drafts for image positions [c, c + D) with one target forward over the queries
// at positions [c, c + Q): query c is fed the last committed token (the condition at c = 0) and
// query c + t the draft at c + t - 1. When c + D < N, Q = D + 1 and the last row has no draft: its
// token is an exact sample of the target given the accepted drafts (the "bonus" token when all D
// are accepted). Row t's target distribution p_t is verified against the draft's q_t:
// the strategy's acceptance rule (decoding/accept_rule.h; exact unless set: spec_accept's
// u < min(1, p/q) with Philox key (seed, c + t, Accept, round) and spec_residual_sample's
// norm(max(p - q, 0)) with key (seed, c + t, Residual, round)) resolves every row on the GPU; the
// host reads back four small integer rows and commits up to and including the first rejected row.
//
// KV rollback is the causal mask: slot = sequence position, each query sees the slots up to its
// own, and the slots of rejected drafts are overwritten when the position is fed again.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decoding/accept_rule.h"
#include "decoding/fault_injection.h"
#include "decoding/strategy.h"
#include "engine/ops/sampler.h"

namespace vkspec {

// A step's q rows from position c as read back: the drafts it verified (one per row, but the last
// row at most), each row's acceptance and resolved token.
struct VerifiedRows {
  int64_t c, q;
  const std::vector<uint32_t>& draft_tokens;
  const std::vector<uint32_t>& accept;
  const std::vector<uint32_t>& resolved;
};
// Commits rows [0, j] of the step (j = the first rejected row, or q when none) into grid (token
// check: the strategy's checked_token) and fills the event's proposed/accepted/rejected/resampled
// lists. Returns j; the image's committed count becomes c + min(j + 1, q). Shared by the one-image
// and the batched window strategies.
int64_t commit_verified_rows(StepEvent& e, std::vector<int32_t>& grid, const VerifiedRows& rows,
                             const std::function<int32_t(uint32_t, int64_t)>& checked_token, const std::string& method);

class SpeculativeStrategy : public Strategy {
 protected:
  // max_drafts: the most drafts one step verifies (the target runs max_drafts + 1 queries).
  SpeculativeStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, int64_t max_drafts);

  struct Outcome {
    // Per row of the step; independent: record_independent_draft's sample (else undefined).
    std::vector<uint32_t> accept, resolved, fresh, independent;
  };

  int64_t max_drafts() const { return max_drafts_; }
  // The stream every step records into (one submit per step).
  CommandStream& stream() { return target().stream(); }
  // Drafts verified from position c this step, and queries the target runs for them.
  int64_t drafts_at(int64_t c) const { return std::min(max_drafts_, image_tokens() - c); }
  int64_t queries_for(int64_t c, int64_t drafts) const { return drafts + (c + drafts < image_tokens() ? 1 : 0); }
  // Image positions [first, first + n) as u32 (the Philox position of each row).
  TensorView positions(int64_t first, int64_t n) const { return target().positions(first, n); }

  // The target batch for queries [c, c + q); fed: the q - 1 drafts fed after the committed token
  // (placeholders when the stream copies GPU-made drafts into token_ids() before the forward).
  // Kept alive until the step's submit has finished.
  const GptBatch& target_batch(int64_t c, int64_t q, const std::vector<uint32_t>& fed);
  // Records the target forward and the sampler over its q rows: p (returned, f32 [q, V]) with the
  // strategy's sampler settings; with fresh_mode != None also a token per row from p with
  // fresh_purpose (read back as Outcome::fresh). With faults.q_unfiltered the unfiltered
  // probabilities are also computed (unfiltered_p()).
  TensorView record_target(const GptBatch& batch, int64_t c, int64_t q, ops::SampleMode fresh_mode,
                           uint32_t fresh_purpose);
  TensorView unfiltered_p(int64_t q) const { return p_unfiltered_.view().rows(0, q); }
  // The final hidden state of the last record_target's queries, f32 [batch rows * q, dim].
  const TensorView& last_hidden() const { return last_hidden_; }
  // Rows of the target-probabilities buffer as scratch for work recorded before record_target.
  TensorView p_scratch(int64_t n) const { return p_.view().rows(0, n); }
  // Records acceptance and resolution of rows [0, q) under the strategy's acceptance rule: drafts
  // u32 [q] (kNoToken: none), draft distributions q_rows f32 [q, V]; round distinguishes the random
  // numbers of repeated visits. p itself is left as it is (a relaxed target goes to scratch).
  void record_verify(const TensorView& p, const TensorView& q_rows, const TensorView& drafts, int64_t c, int64_t q,
                     uint32_t round);
  // Under a lossy rule, also resolves the same rows with the exact test against p itself (same
  // random numbers) into Outcome::fresh. Why: a coupled
  // next draft must be distributed as the q recorded for it (p); the relaxed resolution is not, and
  // re-verifying it step after step would pay the relaxation's drift at every visit instead of once.
  void record_exact_successor(const TensorView& p, const TensorView& q_rows, const TensorView& drafts, int64_t c,
                              int64_t q, uint32_t round);
  // A sample of p per row, independent of the draft and of every other sample of the step (Philox
  // key (seed, c + t, Draft, round)), into Outcome::independent: the uncoupled next draft of
  // partial coupling (WindowOptions::alpha), whatever Outcome::fresh already holds.
  void record_independent_draft(const TensorView& p, int64_t c, int64_t q, uint32_t round);
  // Copies u32 [n] from the device into the read-back row of fresh tokens (drafts made on the GPU).
  void record_fresh_copy(const TensorView& src);
  // Submits the step, waits, reads back q rows.
  Outcome finish(int64_t q);
  // Commits rows [0, j] of a step that verified `drafts` drafts from c (j = first rejected row,
  // or q when none): fills the event's lists, the grid, committed_ and nfe_. Returns j.
  int64_t commit(StepEvent& e, int64_t c, int64_t q, const std::vector<uint32_t>& draft_tokens, const Outcome& o);

  // Sets how drafts are judged (exact unless called); binding checks the models the rule needs.
  void set_accept_rule(const AcceptChoice& rule);
  const AcceptRule& accept_rule() const { return *accept_; }

  const Faults faults_ = active_faults();

 private:
  JudgedRows judged(const TensorView& p, const TensorView& q_rows, const TensorView& drafts, int64_t c, int64_t q,
                    uint32_t round) const;

  int64_t max_drafts_;
  Tensor p_;             // f32 [max_q, V]: the step's target distributions
  Tensor p_unfiltered_;  // f32 [max_q, V], only with faults_.q_unfiltered
  Tensor exact_accept_;  // u32 [max_q], only with a lossy acceptance rule (record_exact_successor)
  TensorView last_hidden_;
  std::unique_ptr<AcceptRule> accept_;
  Tensor out_;  // u32 [4, max_q], read back: accept, resolved token, fresh token, independent token
};

}  // namespace vkspec
