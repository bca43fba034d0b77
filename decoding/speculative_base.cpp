#include "decoding/speculative_base.h"

#include <cfloat>

#include "decoding/neighbour_options.h"
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
  ops::sampler(stream(), out.logits, positions(c, q), sp, p, fresh_mode == ops::SampleMode::None ? TensorView{} : fresh);
  if (faults_.q_unfiltered) {
    if (!p_unfiltered_.valid()) p_unfiltered_ = models_.ctx->tensor(DType::F32, p_.shape(), "unfiltered probabilities");
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.mode = ops::SampleMode::None;
    ops::sampler(stream(), out.logits, {}, sp, unfiltered_p(q), {});
  }
  return p;
}

namespace {

// Total variation never exceeds 1, but a float sum of a row may by an ulp: delta = 1 admits all.
float relax_delta(double delta) { return delta >= 1.0 ? FLT_MAX : static_cast<float>(delta); }

}  // namespace

OptionSpec accept_choice_spec(AcceptRule::Kind fallback) {
  return OptionSpec::choice("accept", accept_kind_name(fallback), {"exact", "lantern"},
                            "how drafts are judged: exact (lossless) or LANTERN's relaxed test");
}

std::vector<OptionSpec> lantern_option_specs() {
  const AcceptRule d;
  return {OptionSpec::integer("k", d.k, 1, 65536, "LANTERN: nearest codebook entries pooled (clamped to the table)"),
          OptionSpec::number("delta", d.delta, 0.0, 1.0,
                             "LANTERN: the most probability mass moved onto a draft, TV(p', p) (a committed token can "
                             "move further, docs/methods.md)"),
          neighbour_metric_spec()};
}

AcceptRule parse_accept_options(const OptionValues& o, AcceptRule::Kind fallback) {
  AcceptRule r;
  r.kind = fallback;
  if (o.declares("accept")) r.kind = o.choice("accept") == "lantern" ? AcceptRule::Kind::Lantern : AcceptRule::Kind::Exact;
  r.k = o.integer("k");
  r.delta = o.number("delta");
  r.metric = neighbour_metric_of(o);
  if (r.kind == AcceptRule::Kind::Exact && (o.given("k") || o.given("delta") || o.given("metric")))
    throw Error(o.method() + ": --k, --delta and --metric belong to --accept lantern");
  return r;
}

const char* accept_kind_name(AcceptRule::Kind k) { return k == AcceptRule::Kind::Lantern ? "lantern" : "exact"; }

AcceptRule bind_accept_rule(AcceptRule rule, const ModelSet& models, const std::string& method) {
  if (rule.kind == AcceptRule::Kind::Exact) return rule;
  rule.table = &neighbour_table(models, rule.metric, method);
  rule.k = std::min(rule.k, rule.table->k_max());
  return rule;
}

TensorView record_accept_target(CommandStream& s, const AcceptRule& rule, const TensorView& p, const TensorView& drafts,
                                const TensorView& scratch) {
  if (rule.kind == AcceptRule::Kind::Exact) return p;
  if (!rule.table) throw Error("record_accept_target: the relaxed rule is not bound (bind_accept_rule)");
  ops::relax_neighbourhood(s, p, drafts, rule.table->table().view(), static_cast<uint32_t>(rule.k),
                           relax_delta(rule.delta), scratch);
  return scratch;
}

void SpeculativeStrategy::set_accept_rule(const AcceptRule& rule) {
  accept_ = bind_accept_rule(rule, models_, name());
  if (accept_.kind != AcceptRule::Kind::Exact) {
    p_relaxed_ = models_.ctx->tensor(DType::F32, p_.shape(), name() + " relaxed target");
    exact_accept_ = models_.ctx->tensor(DType::U32, {p_.shape()[0]}, name() + " exact acceptance");
  }
}

void SpeculativeStrategy::record_resolution(const TensorView& p, const TensorView& q_rows, const TensorView& drafts,
                                            int64_t c, int64_t q, uint32_t round, const TensorView& accept,
                                            const TensorView& resolved) {
  using philox::Purpose;
  ops::spec_accept(stream(), p, q_rows, drafts, positions(c, q), in_.seed, philox::purpose_word(Purpose::Accept, round),
                   accept);
  ops::spec_residual_sample(stream(), p, q_rows, positions(c, q), in_.seed,
                            philox::purpose_word(Purpose::Residual, round), resolved, accept, drafts);
}

void SpeculativeStrategy::record_verify(const TensorView& p_in, const TensorView& q_rows, const TensorView& drafts,
                                        int64_t c, int64_t q, uint32_t round) {
  const int64_t max_q = p_.shape()[0];
  const TensorView p = record_accept_target(stream(), accept_, p_in, drafts,
                                            p_relaxed_.valid() ? p_relaxed_.view().rows(0, q) : TensorView{});
  const TensorView flat = out_.view().reshape({kOutRows * max_q});
  record_resolution(p, q_rows, drafts, c, q, round, flat.rows(0, q), flat.rows(max_q, q));
}

void SpeculativeStrategy::record_exact_successor(const TensorView& p, const TensorView& q_rows,
                                                 const TensorView& drafts, int64_t c, int64_t q, uint32_t round) {
  if (!exact_accept_.valid()) throw Error(name() + ": an exact successor is only recorded under a relaxed rule");
  const int64_t max_q = p_.shape()[0];
  record_resolution(p, q_rows, drafts, c, q, round, exact_accept_.view().rows(0, q),
                    out_.view().reshape({kOutRows * max_q}).rows(2 * max_q, q));
}

void SpeculativeStrategy::record_independent_draft(const TensorView& p, int64_t c, int64_t q, uint32_t round) {
  const int64_t max_q = p_.shape()[0];
  // The residual norm(max(p - q, 0)) with q = p is all zero, and then spec_residual_sample draws
  // from p itself (inverse CDF with this key's uniform): an exact sample of p without the
  // sampler's second pass over the logits.
  ops::spec_residual_sample(stream(), p, p, positions(c, q), in_.seed,
                            philox::purpose_word(philox::Purpose::Draft, round),
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
  auto row = [&](int64_t r) {
    return std::vector<uint32_t>(all.begin() + r * max_q, all.begin() + r * max_q + q);
  };
  o.accept = row(0);
  o.resolved = row(1);
  o.fresh = row(2);
  o.independent = row(3);
  return o;
}

int64_t SpeculativeStrategy::commit(StepEvent& e, int64_t c, int64_t q, const std::vector<uint32_t>& draft_tokens,
                                    const Outcome& o) {
  const int64_t drafts = static_cast<int64_t>(draft_tokens.size());
  int64_t j = 0;
  while (j < q && o.accept[static_cast<size_t>(j)]) ++j;
  if (j > drafts) throw Error(name() + ": accepted a row without a draft");
  for (int64_t t = 0; t < q; ++t) {
    const int32_t n = static_cast<int32_t>(c + t);
    e.proposed.push_back(n);
    // The row without a draft proposes the sample it resolves to.
    e.proposed_tokens.push_back(static_cast<int32_t>(t < drafts ? draft_tokens[static_cast<size_t>(t)]
                                                                : o.resolved[static_cast<size_t>(t)]));
  }
  for (int64_t t = 0; t <= j && t < q; ++t) {
    grid_[static_cast<size_t>(c + t)] = checked_token(o.resolved[static_cast<size_t>(t)], c + t);
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

}  // namespace vkspec
