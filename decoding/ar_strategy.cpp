#include "decoding/ar_strategy.h"

#include "engine/ops/sampler.h"

namespace vkspec {

ArStrategy::ArStrategy(const ModelSet& models, const StrategyInputs& in) : Strategy("ar", models, in, 1) {
  Context& ctx = *models.ctx;
  token_ = ctx.tensor(DType::U32, {1}, "ar sampled token", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {1, vocab()}, "ar probabilities");
}

void ArStrategy::decode(StepEvent& e) {
  const int64_t n = committed_;  // the query after token n - 1 predicts image token n
  std::vector<uint32_t> fed;
  if (n > 0) fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(n - 1)]));
  TargetSession& t = target();
  const GptOutputs out = t.forward(t.causal(n, 1, fed));
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(t.stream(), out.logits, t.positions(n, 1), sp, probs_, token_);
  t.submit_and_wait();
  uint32_t tok = 0;
  t.ctx().download(token_, &tok, 4);

  grid_[static_cast<size_t>(n)] = checked_token(tok, n);
  ++committed_;
  ++nfe_;
  e.proposed = {static_cast<int32_t>(n)};
  e.proposed_tokens = {static_cast<int32_t>(tok)};
  e.accepted = {static_cast<int32_t>(n)};
}

namespace {

StrategyDescriptor ar() {
  StrategyDescriptor d;
  d.name = "ar";
  d.order = 0;
  d.reference_method = true;
  d.summary = "one token per forward pass, left to right: the reference every method is compared with";
  d.reference = "LlamaGen (Sun et al. 2024), vanilla autoregressive sampling";
  d.lossless = [](const OptionValues&) { return true; };
  d.max_queries = [](const OptionValues&, const GptConfig&) -> int64_t { return 1; };
  d.fixed_queries = [](const OptionValues&) -> int64_t { return 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues&) -> std::unique_ptr<Strategy> {
    return std::make_unique<ArStrategy>(m, in);
  };
  return d;
}

const RegisterStrategy kAr(ar());

}  // namespace
}  // namespace vkspec
