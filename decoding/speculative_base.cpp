#include "decoding/speculative_base.h"

#include <cfloat>
#include <numeric>

#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {

SpeculativeStrategy::SpeculativeStrategy(const ModelSet& models, const StrategyInputs& in, const char* method,
                                         int64_t max_drafts)
    : Strategy(models, in),
      method_(method),
      max_drafts_(max_drafts),
      rows_(in.sampler.uses_cfg() ? 2 : 1),
      cache_(models.target->make_cache(0, rows_)),
      stream_(*models.ctx, in.profile) {
  const int64_t max_q = max_drafts + 1, limit = models.target->options().max_queries;
  if (max_drafts < 1) throw Error(std::string(method) + ": needs at least one draft per step");
  if (max_q > limit)
    throw Error(std::string(method) + ": a window of " + std::to_string(max_drafts) + " drafts needs " +
                std::to_string(max_q) + " queries per forward, the model was loaded for at most " +
                std::to_string(limit) + " (GptOptions::max_queries)");
  Context& ctx = *models.ctx;
  std::vector<uint32_t> pos(static_cast<size_t>(image_tokens()));
  std::iota(pos.begin(), pos.end(), 0u);
  positions_ = ctx.tensor(DType::U32, {image_tokens()}, std::string(method) + " positions");
  ctx.upload(positions_, pos.data(), pos.size() * 4);
  p_ = ctx.tensor(DType::F32, {max_q, vocab()}, std::string(method) + " target probabilities");
  out_ = ctx.tensor(DType::U32, {3, max_q}, std::string(method) + " step results", MemoryUsage::Readback);
}

const GptBatch& SpeculativeStrategy::target_batch(int64_t c, int64_t q, const std::vector<uint32_t>& fed) {
  const GptConfig& cfg = models_.target->config();
  std::vector<uint32_t> tokens;
  if (c > 0) tokens.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(c - 1)]));
  tokens.insert(tokens.end(), fed.begin(), fed.end());
  const ClassLabel label(in_.class_id);
  batch_ = std::make_unique<GptBatch>(*models_.ctx, cfg,
                                      GptQueries::causal(cfg, c, q, tokens, guided_rows(label, rows_), cache_.slots()),
                                      rows_, cache_.slots());
  return *batch_;
}

TensorView SpeculativeStrategy::record_target(const GptBatch& batch, int64_t c, int64_t q, ops::SampleMode fresh_mode,
                                              uint32_t fresh_purpose) {
  const int64_t max_q = p_.shape()[0];
  const GptOutputs out = models_.target->forward(stream_, batch, cache_);
  last_hidden_ = out.hidden;
  const TensorView p = p_.view().rows(0, q);
  const TensorView fresh = out_.view().reshape({3 * max_q}).rows(2 * max_q, q);
  ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, fresh_mode, fresh_purpose);
  ops::sampler(stream_, out.logits, positions(c, q), sp, p, fresh_mode == ops::SampleMode::None ? TensorView{} : fresh);
  if (faults_.q_unfiltered) {
    if (!p_unfiltered_.valid()) p_unfiltered_ = models_.ctx->tensor(DType::F32, p_.shape(), "unfiltered probabilities");
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.mode = ops::SampleMode::None;
    ops::sampler(stream_, out.logits, {}, sp, unfiltered_p(q), {});
  }
  return p;
}

namespace {

// Total variation never exceeds 1, but a float sum of a row may by an ulp: delta = 1 admits all.
float relax_delta(double delta) { return delta >= 1.0 ? FLT_MAX : static_cast<float>(delta); }

}  // namespace

AcceptRule parse_accept_options(const MethodOptions& o, const std::string& method, AcceptRule::Kind fallback) {
  AcceptRule r;
  const std::string kind = option_choice(o, method, "accept", accept_kind_name(fallback), {"exact", "lantern"});
  r.kind = kind == "lantern" ? AcceptRule::Kind::Lantern : AcceptRule::Kind::Exact;
  r.k = option_int(o, method, "k", r.k, 1, 65536);
  r.delta = option_double(o, method, "delta", r.delta, 0.0, 1.0);
  if (r.kind == AcceptRule::Kind::Exact && (o.count("k") || o.count("delta")))
    throw Error(method + ": --k and --delta belong to --accept lantern");
  return r;
}

const char* accept_kind_name(AcceptRule::Kind k) { return k == AcceptRule::Kind::Lantern ? "lantern" : "exact"; }

AcceptRule bind_accept_rule(AcceptRule rule, const ModelSet& models, const std::string& method) {
  if (rule.kind == AcceptRule::Kind::Exact) return rule;
  if (!models.neighbours)
    throw Error(method + ": relaxed acceptance needs the codebook neighbour table (the VQ model)");
  const int64_t vocab = models.target->config().vocab_size;
  if (models.neighbours->entries() != vocab)
    throw Error(method + ": the neighbour table has " + std::to_string(models.neighbours->entries()) +
                " entries, the model's vocabulary is " + std::to_string(vocab));
  rule.k = std::min(rule.k, models.neighbours->k_max());
  return rule;
}

TensorView record_accept_target(CommandStream& s, const AcceptRule& rule, const ModelSet& models, const TensorView& p,
                                const TensorView& drafts, const TensorView& scratch) {
  if (rule.kind == AcceptRule::Kind::Exact) return p;
  ops::relax_neighbourhood(s, p, drafts, models.neighbours->table().view(), static_cast<uint32_t>(rule.k),
                           relax_delta(rule.delta), scratch);
  return scratch;
}

void SpeculativeStrategy::set_accept_rule(const AcceptRule& rule) {
  accept_ = bind_accept_rule(rule, models_, method_);
  if (accept_.kind != AcceptRule::Kind::Exact) {
    p_relaxed_ = models_.ctx->tensor(DType::F32, p_.shape(), method_ + " relaxed target");
    exact_accept_ = models_.ctx->tensor(DType::U32, {p_.shape()[0]}, method_ + " exact acceptance");
  }
}

void SpeculativeStrategy::record_resolution(const TensorView& p, const TensorView& q_rows, const TensorView& drafts,
                                            int64_t c, int64_t q, uint32_t round, const TensorView& accept,
                                            const TensorView& resolved) {
  using philox::Purpose;
  ops::spec_accept(stream_, p, q_rows, drafts, positions(c, q), in_.seed, philox::purpose_word(Purpose::Accept, round),
                   accept);
  ops::spec_residual_sample(stream_, p, q_rows, positions(c, q), in_.seed,
                            philox::purpose_word(Purpose::Residual, round), resolved, accept, drafts);
}

void SpeculativeStrategy::record_verify(const TensorView& p_in, const TensorView& q_rows, const TensorView& drafts,
                                        int64_t c, int64_t q, uint32_t round) {
  const int64_t max_q = p_.shape()[0];
  const TensorView p = record_accept_target(stream_, accept_, models_, p_in, drafts,
                                            p_relaxed_.valid() ? p_relaxed_.view().rows(0, q) : TensorView{});
  const TensorView flat = out_.view().reshape({3 * max_q});
  record_resolution(p, q_rows, drafts, c, q, round, flat.rows(0, q), flat.rows(max_q, q));
}

void SpeculativeStrategy::record_exact_successor(const TensorView& p, const TensorView& q_rows,
                                                 const TensorView& drafts, int64_t c, int64_t q, uint32_t round) {
  if (!exact_accept_.valid()) throw Error(method_ + ": an exact successor is only recorded under a relaxed rule");
  const int64_t max_q = p_.shape()[0];
  record_resolution(p, q_rows, drafts, c, q, round, exact_accept_.view().rows(0, q),
                    out_.view().reshape({3 * max_q}).rows(2 * max_q, q));
}

void SpeculativeStrategy::record_fresh_copy(const TensorView& src) {
  const int64_t max_q = p_.shape()[0];
  stream_.copy(src, out_.view().reshape({3 * max_q}).rows(2 * max_q, src.numel()));
}

SpeculativeStrategy::Outcome SpeculativeStrategy::finish(int64_t q) {
  stream_.submit_and_wait();
  batch_.reset();
  const int64_t max_q = p_.shape()[0];
  std::vector<uint32_t> all(static_cast<size_t>(3 * max_q));
  models_.ctx->download(out_, all.data(), all.size() * 4);
  Outcome o;
  auto row = [&](int64_t r) {
    return std::vector<uint32_t>(all.begin() + r * max_q, all.begin() + r * max_q + q);
  };
  o.accept = row(0);
  o.resolved = row(1);
  o.fresh = row(2);
  return o;
}

int64_t SpeculativeStrategy::commit(StepEvent& e, int64_t c, int64_t q, const std::vector<uint32_t>& draft_tokens,
                                    const Outcome& o) {
  const int64_t drafts = static_cast<int64_t>(draft_tokens.size());
  int64_t j = 0;
  while (j < q && o.accept[static_cast<size_t>(j)]) ++j;
  if (j > drafts) throw Error(std::string(name()) + ": accepted a row without a draft");
  for (int64_t t = 0; t < q; ++t) {
    const int32_t n = static_cast<int32_t>(c + t);
    e.proposed.push_back(n);
    // The row without a draft proposes the sample it resolves to.
    e.proposed_tokens.push_back(static_cast<int32_t>(t < drafts ? draft_tokens[static_cast<size_t>(t)]
                                                                : o.resolved[static_cast<size_t>(t)]));
  }
  for (int64_t t = 0; t <= j && t < q; ++t) {
    const uint32_t tok = o.resolved[static_cast<size_t>(t)];
    if (tok >= static_cast<uint32_t>(vocab()))
      throw Error(std::string(name()) + ": the GPU resolved position " + std::to_string(c + t) + " to token " +
                  std::to_string(tok) + ", outside the vocabulary");
    grid_[static_cast<size_t>(c + t)] = static_cast<int32_t>(tok);
    const int32_t n = static_cast<int32_t>(c + t);
    if (t < j || t >= drafts) {
      e.accepted.push_back(n);  // an accepted draft, or the exact sample of the row without one
    } else {
      e.rejected.push_back(n);
      e.resampled.push_back(n);
    }
  }
  committed_ = c + std::min(j + 1, q);
  ++nfe_;
  return j;
}

void SpeculativeStrategy::close_event(StepEvent& e, double wall_ms) {
  e.device_ms = stream_.total_ms();
  e.wall_ms = wall_ms;
  finish_event(e);
}

}  // namespace vkspec
