#include "decoding/ar_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "engine/ops/sampler.h"

namespace vkspec {

ArStrategy::ArStrategy(const ModelSet& models, const StrategyInputs& in, int64_t tokens_per_submit)
    : Strategy("ar", models, in, 1), per_submit_(tokens_per_submit) {
  if (per_submit_ < 1) throw Error("ar: tokens per submit must be >= 1, got " + std::to_string(per_submit_));
  Context& ctx = *models.ctx;
  tokens_ = ctx.tensor(DType::U32, {per_submit_}, "ar sampled tokens", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {1, vocab()}, "ar probabilities");
}

void ArStrategy::decode(StepEvent& e) {
  const int64_t n = committed_;  // the query after token n - 1 predicts image token n
  if (next_ == host_tokens_.size()) record_and_run(n);
  // One step per token and forward, as every strategy's events are; the forwards of a submit are
  // handed out one per step.
  const int32_t tok = checked_token(host_tokens_[next_++], n);
  grid_[static_cast<size_t>(n)] = tok;
  ++committed_;
  ++nfe_;
  e.proposed = {static_cast<int32_t>(n)};
  e.proposed_tokens = {tok};
  e.accepted = {static_cast<int32_t>(n)};
}

void ArStrategy::record_and_run(int64_t first) {
  const int64_t K = std::min(per_submit_, image_tokens() - first);
  TargetSession& t = target();
  CommandStream& s = t.stream();
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Sample));
  for (int64_t k = 0; k < K; ++k) {
    const int64_t n = first + k;
    std::vector<uint32_t> fed;
    if (n > 0) fed.push_back(k == 0 ? static_cast<uint32_t>(grid_[static_cast<size_t>(n - 1)]) : 0u);
    const GptBatch& b = t.causal(n, 1, fed);
    if (k > 0) s.copy(tokens_.view().rows(k - 1, 1), b.token_ids());  // the token sampled just before
    const GptOutputs out = t.forward(b);
    ops::sampler(s, out.logits, t.positions(n, 1), sp, probs_, tokens_.view().rows(k, 1));
  }
  t.submit_and_wait();
  host_tokens_.resize(static_cast<size_t>(K));
  t.ctx().download(tokens_, 0, host_tokens_.data(), host_tokens_.size() * 4);
  next_ = 0;
}

namespace {

StrategyDescriptor ar() {
  StrategyDescriptor d;
  d.name = "ar";
  d.order = 0;
  d.reference_method = true;
  d.summary = "one token per forward pass, left to right: the reference every method is compared with";
  d.reference = "LlamaGen (Sun et al. 2024), vanilla autoregressive sampling";
  d.options = {OptionSpec::integer("tokens-per-submit", 1, 1, 4096,
                                   "forwards recorded per submit, each fed the token the one before sampled "
                                   "on the device: the host waits once per this many tokens (same tokens)")};
  d.lossless = [](const OptionValues&) { return true; };
  d.max_queries = [](const OptionValues&, const GptConfig&) -> int64_t { return 1; };
  d.fixed_queries = [](const OptionValues&) -> int64_t { return 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<ArStrategy>(m, in, o.integer("tokens-per-submit"));
  };
  return d;
}

const RegisterStrategy kAr(ar());

}  // namespace
}  // namespace vkspec
