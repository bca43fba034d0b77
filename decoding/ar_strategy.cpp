#include "decoding/ar_strategy.h"

#include <chrono>

#include "engine/ops/sampler.h"
#include "common/error.h"

namespace vkspec {

ArStrategy::ArStrategy(const ModelSet& models, const StrategyInputs& in)
    : Strategy(models, in),
      rows_(in.sampler.uses_cfg() ? 2 : 1),
      cache_(models.target->make_cache(0, rows_)),
      stream_(*models.ctx, in.profile) {
  check_options(in.options, "ar", {});
  Context& ctx = *models.ctx;
  positions_ = ctx.tensor(DType::U32, {1}, "ar sample position", MemoryUsage::Upload);
  token_ = ctx.tensor(DType::U32, {1}, "ar sampled token", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {1, models.target->config().vocab_size}, "ar probabilities");
}

StepEvent ArStrategy::step() {
  if (done()) throw Error("ar: step() after the image is complete");
  const auto t0 = std::chrono::steady_clock::now();
  Context& ctx = *models_.ctx;
  Gpt& gpt = *models_.target;
  const GptConfig& cfg = gpt.config();
  const int64_t n = committed_;  // the query at sequence position n predicts image token n
  std::vector<uint32_t> fed;
  if (n > 0) fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(n - 1)]));
  const ClassLabel label(in_.class_id);
  GptBatch batch(ctx, cfg, GptQueries::causal(cfg, n, 1, fed, guided_rows(label, rows_), cache_.slots()), rows_,
                 cache_.slots());
  const uint32_t pos = static_cast<uint32_t>(n);
  ctx.upload(positions_, &pos, 4);

  CommandStream& s = stream_;
  const GptOutputs out = gpt.forward(s, batch, cache_);
  const ops::SamplerParams sp = in_.sampler.op_params(
      cfg.vocab_size, in_.seed, ops::SampleMode::Categorical, philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(s, out.logits, positions_, sp, probs_, token_);
  s.submit_and_wait();
  uint32_t tok = 0;
  ctx.download(token_, &tok, 4);
  if (tok >= cfg.vocab_size) throw Error("ar: sampler returned token " + std::to_string(tok) + " outside the vocabulary");

  grid_[static_cast<size_t>(n)] = static_cast<int32_t>(tok);
  ++committed_;
  ++nfe_;
  StepEvent e;
  e.proposed = {static_cast<int32_t>(n)};
  e.proposed_tokens = {static_cast<int32_t>(tok)};
  e.accepted = {static_cast<int32_t>(n)};
  e.device_ms = s.total_ms();
  e.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  finish_event(e);
  return e;
}

}  // namespace vkspec
