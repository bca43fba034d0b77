#include "decoding/zipar_batch_strategy.h"

#include <algorithm>

#include "engine/ops/sampler.h"

namespace vkspec {

ZipArBatchStrategy::ZipArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in, int64_t window,
                                       int64_t lanes)
    : LaneBatchStrategy("zipar", models, in, models.target->config().grid_size + 1,
                        models.target->config().grid_size + 1, lanes),
      window_(window) {
  const GptConfig& cfg = models.target->config();
  const int64_t rows = lanes * (cfg.grid_size + 1);
  Context& ctx = *models.ctx;
  rows_.assign(static_cast<size_t>(lanes),
               ZipArRows(cfg.grid_size, window, cfg.cls_token_num, target().cache().slots()));
  positions_ = ctx.tensor(DType::U32, {rows}, "zipar sample positions", MemoryUsage::Upload);
  seeds_ = ctx.tensor(DType::U32, {rows, 2}, "zipar row seeds", MemoryUsage::Upload);
  probs_ = ctx.tensor(DType::F32, {rows, cfg.vocab_size}, "zipar probabilities");
  tokens_ = ctx.tensor(DType::U32, {rows}, "zipar sampled tokens", MemoryUsage::Readback);
}

GptQueries ZipArBatchStrategy::lane_queries(size_t lane, const std::vector<ZipArQuery>& plan, int64_t T) {
  const TargetSession& t = target();
  const int64_t cls = t.config().cls_token_num, real = static_cast<int64_t>(plan.size());
  const ZipArRows& rows = rows_[lane];
  GptQueries q;
  ops::AttentionMaskBuilder mb(T, t.cache().slots());
  for (int64_t i = 0; i < real; ++i) {
    const ZipArQuery& z = plan[static_cast<size_t>(i)];
    q.positions.push_back(z.slot);
    q.slots.push_back(static_cast<uint32_t>(z.slot));
    for (int64_t s = 0; s < z.slot; ++s)
      if (rows.slot_valid(s)) mb.see(i, s);
    mb.see(i, z.slot);
    if (z.slot >= cls) q.tokens.push_back(z.fed);
  }
  return padded_lane_queries(lane, std::move(q), mb, real, T, 0);
}

void ZipArBatchStrategy::commit_lane(size_t lane, const std::vector<ZipArQuery>& plan, int64_t T,
                                     const std::vector<uint32_t>& tokens, StepEvent& e) {
  const size_t image = static_cast<size_t>(lane_image(lane));
  Image& im = images_[image];
  for (size_t i = 0; i < plan.size(); ++i) {
    const ZipArQuery& q = plan[i];
    if (q.predicts < 0) continue;  // a repair
    const int32_t tok =
        checked_token(tokens[static_cast<size_t>(lane) * static_cast<size_t>(T) + i], image, q.predicts);
    im.grid[static_cast<size_t>(q.predicts)] = tok;
    rows_[lane].sampled(q.predicts);
    e.proposed.push_back(static_cast<int32_t>(q.predicts));
    e.proposed_tokens.push_back(tok);
    e.accepted.push_back(static_cast<int32_t>(q.predicts));
    ++im.committed;
  }
  ++im.nfe;
}

void ZipArBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  TargetSession& t = target();
  const GptConfig& cfg = t.config();
  for (size_t k : admit()) rows_[k] = ZipArRows(cfg.grid_size, window_, cfg.cls_token_num, t.cache().slots());
  const size_t L = lanes();
  std::vector<std::vector<ZipArQuery>> plans(L);
  int64_t T = 1;
  for (size_t k = 0; k < L; ++k) {
    if (!lane_busy(k)) continue;
    plans[k] = rows_[k].plan(images_[static_cast<size_t>(lane_image(k))].grid);
    T = std::max(T, static_cast<int64_t>(plans[k].size()));
  }
  const int64_t R = static_cast<int64_t>(L) * T;
  std::vector<uint32_t> positions(static_cast<size_t>(R), 0);
  std::vector<uint64_t> seeds(static_cast<size_t>(R), 0);
  std::vector<GptQueries> queries;
  for (size_t k = 0; k < L; ++k) {
    queries.push_back(lane_queries(k, plans[k], T));
    for (size_t i = 0; i < plans[k].size(); ++i) {
      const size_t r = k * static_cast<size_t>(T) + i;
      positions[r] = static_cast<uint32_t>(std::max<int64_t>(plans[k][i].predicts, 0));
      seeds[r] = images_[static_cast<size_t>(lane_image(k))].in.seed;
    }
  }
  t.ctx().upload(positions_, 0, positions.data(), positions.size() * 4);
  t.ctx().upload(seeds_, 0, seeds.data(), seeds.size() * 8);  // low word first, as the sampler reads them
  const GptOutputs out = t.forward(t.batch(GptQueries::ragged(queries)));
  const StrategyInputs& in = images_[0].in;  // the settings every image shares (batch_strategy.cpp)
  const ops::SamplerParams sp = in.sampler.op_params(vocab(), in.seed, ops::SampleMode::Categorical,
                                                     philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(t.stream(), out.logits, positions_.view().rows(0, R), sp, probs_.view().rows(0, R),
               tokens_.view().rows(0, R), {}, seeds_.view().rows(0, R));
  t.submit_and_wait();
  std::vector<uint32_t> tokens(static_cast<size_t>(R));
  t.ctx().download(tokens_, 0, tokens.data(), tokens.size() * 4);
  for (size_t k = 0; k < L; ++k) {
    if (plans[k].empty()) continue;
    const size_t image = static_cast<size_t>(lane_image(k));
    commit_lane(k, plans[k], T, tokens, events[image]);
    advanced[image] = true;
  }
}

}  // namespace vkspec
