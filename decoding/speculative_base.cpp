#include "decoding/speculative_base.h"

#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {
namespace {

// Rows of the step's read-back: acceptance, resolved token, fresh token, independent token.
constexpr int64_t kOutRows = 4;

}  // namespace

SpeculativeStrategy::SpeculativeStrategy(std::string method, const ModelSet& models, const StrategyInputs& in,
                                         int64_t max_drafts)
    : Strategy(std::move(method), models, in, max_drafts + 1), max_drafts_(max_drafts) {
  if (max_drafts < 1) throw Error(name() + ": needs at least one draft per step");
  const int64_t max_q = max_drafts + 1;
  Context& ctx = *models.ctx;
  p_ = ctx.tensor(DType::F32, {max_q, vocab()}, name() + " target probabilities");
  out_ = ctx.tensor(DType::U32, {kOutRows, max_q}, name() + " step results", MemoryUsage::Readback);
  accept_ = bind_accept_rule(AcceptChoice{}, models, name(), max_q);
}

const GptBatch& SpeculativeStrategy::target_batch(int64_t c, int64_t q, const std::vector<uint32_t>& fed) {
  std::vector<uint32_t> tokens;
  if (c > 0) tokens.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(c - 1)]));
  tokens.insert(tokens.end(), fed.begin(), fed.end());
  return target().causal(c, q, tokens);
}

TensorView SpeculativeStrategy::record_target(const GptBatch& batch, int64_t c, int64_t q, ops::SampleMode fresh_mode,
                                              uint32_t fresh_purpose) {
  const int64_t max_q = p_.shape()[0];
  const GptOutputs out = target().forward(batch);
  last_hidden_ = out.hidden;
  const TensorView p = p_.view().rows(0, q);
  const TensorView fresh = out_.view().reshape({kOutRows * max_q}).rows(2 * max_q, q);
  ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, fresh_mode, fresh_purpose);
  ops::sampler(stream(), out.logits, positions(c, q), sp, p,
               fresh_mode == ops::SampleMode::None ? TensorView{} : fresh);
  if (faults_.q_unfiltered) {
    if (!p_unfiltered_.valid()) p_unfiltered_ = models_.ctx->tensor(DType::F32, p_.shape(), "unfiltered probabilities");
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.mode = ops::SampleMode::None;
    ops::sampler(stream(), out.logits, {}, sp, unfiltered_p(q), {});
  }
  return p;
}

void SpeculativeStrategy::set_accept_rule(const AcceptChoice& rule) {
  accept_ = bind_accept_rule(rule, models_, name(), p_.shape()[0]);
  if (!accept_->descriptor().lossless)
    exact_accept_ = models_.ctx->tensor(DType::U32, {p_.shape()[0]}, name() + " exact acceptance");
}

JudgedRows SpeculativeStrategy::judged(const TensorView& p, const TensorView& q_rows, const TensorView& drafts,
                                       int64_t c, int64_t q, uint32_t round) const {
  return {p, q_rows, drafts, positions(c, q), in_.seed, round};
}

void SpeculativeStrategy::record_verify(const TensorView& p, const TensorView& q_rows, const TensorView& drafts,
                                        int64_t c, int64_t q, uint32_t round) {
  const int64_t max_q = p_.shape()[0];
  const TensorView flat = out_.view().reshape({kOutRows * max_q});
  accept_->record_resolution(stream(), judged(p, q_rows, drafts, c, q, round), flat.rows(0, q), flat.rows(max_q, q));
}

void SpeculativeStrategy::record_exact_successor(const TensorView& p, const TensorView& q_rows,
                                                 const TensorView& drafts, int64_t c, int64_t q, uint32_t round) {
  if (!exact_accept_.valid()) throw Error(name() + ": an exact successor is only recorded under a lossy rule");
  const int64_t max_q = p_.shape()[0];
  record_exact_resolution(stream(), judged(p, q_rows, drafts, c, q, round), p, exact_accept_.view().rows(0, q),
                          out_.view().reshape({kOutRows * max_q}).rows(2 * max_q, q));
}

void SpeculativeStrategy::record_independent_draft(const TensorView& p, int64_t c, int64_t q, uint32_t round) {
  const int64_t max_q = p_.shape()[0];
  // The residual norm(max(p - q, 0)) with q = p is all zero, and then spec_residual_sample draws
  // from p itself (inverse CDF with this key's uniform): an exact sample of p without the
  // sampler's second pass over the logits.
  ops::spec_residual_sample(stream(), p, p, positions(c, q),
                            {in_.seed, philox::purpose_word(philox::Purpose::Draft, round)},
                            out_.view().reshape({kOutRows * max_q}).rows(3 * max_q, q));
}

void SpeculativeStrategy::record_fresh_copy(const TensorView& src) {
  const int64_t max_q = p_.shape()[0];
  stream().copy(src, out_.view().reshape({kOutRows * max_q}).rows(2 * max_q, src.numel()));
}

SpeculativeStrategy::Outcome SpeculativeStrategy::finish(int64_t q) {
  target().submit_and_wait();
  const int64_t max_q = p_.shape()[0];
  std::vector<uint32_t> all(static_cast<size_t>(kOutRows * max_q));
  models_.ctx->download(out_, all.data(), all.size() * 4);
  Outcome o;
  auto row = [&](int64_t r) { return std::vector<uint32_t>(all.begin() + r * max_q, all.begin() + r * max_q + q); };
  o.accept = row(0);
  o.resolved = row(1);
  o.fresh = row(2);
  o.independent = row(3);
  return o;
}

int64_t commit_verified_rows(StepEvent& e, std::vector<int32_t>& grid, const VerifiedRows& rows,
                             const std::function<int32_t(uint32_t, int64_t)>& checked_token,
                             const std::string& method) {
  const int64_t c = rows.c, q = rows.q;
  const std::vector<uint32_t>&draft_tokens = rows.draft_tokens, &accept = rows.accept, &resolved = rows.resolved;
  const int64_t drafts = static_cast<int64_t>(draft_tokens.size());
  int64_t j = 0;
  while (j < q && accept[static_cast<size_t>(j)]) ++j;
  if (j > drafts) throw Error(method + ": accepted a row without a draft");
  for (int64_t t = 0; t < q; ++t) {
    const int32_t n = static_cast<int32_t>(c + t);
    e.proposed.push_back(n);
    // The row without a draft proposes the sample it resolves to.
    e.proposed_tokens.push_back(static_cast<int32_t>(t < drafts ? draft_tokens[static_cast<size_t>(t)]
                                                                : resolved[static_cast<size_t>(t)]));
  }
  for (int64_t t = 0; t <= j && t < q; ++t) {
    grid[static_cast<size_t>(c + t)] = checked_token(resolved[static_cast<size_t>(t)], c + t);
    const int32_t n = static_cast<int32_t>(c + t);
    if (t < j || t >= drafts) {
      e.accepted.push_back(n);  // an accepted draft, or the exact sample of the row without one
    } else {
      e.rejected.push_back(n);
      e.resampled.push_back(n);
    }
  }
  return j;
}

int64_t SpeculativeStrategy::commit(StepEvent& e, int64_t c, int64_t q, const std::vector<uint32_t>& draft_tokens,
                                    const Outcome& o) {
  const int64_t j = commit_verified_rows(
      e, grid_, {c, q, draft_tokens, o.accept, o.resolved},
      [this](uint32_t token, int64_t n) { return checked_token(token, n); }, name());
  committed_ = c + std::min(j + 1, q);
  ++nfe_;
  return j;
}

}  // namespace vkspec
