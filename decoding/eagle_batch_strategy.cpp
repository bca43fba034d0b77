#include "decoding/eagle_batch_strategy.h"

#include <algorithm>

#include "decoding/eagle_strategy.h"
#include "engine/ops/sampler.h"

namespace vkspec {

EagleBatchStrategy::EagleBatchStrategy(std::string method, const ModelSet& models,
                                       const std::vector<StrategyInputs>& in, const EagleOptions& options,
                                       int64_t lanes)
    : LaneBatchStrategy(method, models, in, eagle_max_queries(options), eagle_max_queries(options), lanes),
      verifies_(static_cast<size_t>(lanes), false) {
  const int64_t rows = target().rows() / target().images();
  for (int64_t k = 0; k < lanes; ++k)
    lanes_.push_back(std::make_unique<EagleLane>(method, models, target(), options, rows));
  probs_ =
      models.ctx->tensor(DType::F32, {lanes * eagle_max_queries(options), vocab()}, method + " target probabilities");
}

EagleBatchStrategy::~EagleBatchStrategy() = default;

GptQueries EagleBatchStrategy::lane_queries(size_t k, int64_t T) {
  if (!verifies_[k]) return padding_queries(k, T);
  const TargetSession& t = target();
  GptQueries q;
  ops::AttentionMaskBuilder mb(T, t.cache().slots());
  const int64_t scratch = lanes_[k]->add_queries(q, mb);
  return padded_lane_queries(k, std::move(q), mb, lanes_[k]->queries(), T, scratch);
}

void EagleBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  TargetSession& t = target();
  for (size_t k : admit()) {
    Image& im = images_[static_cast<size_t>(lane_image(k))];
    lanes_[k]->start({&im.in, &im.grid, &im.committed, &im.nfe, &im.draft_forwards}, lane_conditions(k));
  }
  auto event = [&](size_t k) -> StepEvent& { return events[static_cast<size_t>(lane_image(k))]; };
  bool read_first = false;  // some lane's tree is read back before the forward
  for (size_t k = 0; k < lanes(); ++k)
    if (lane_busy(k)) read_first = lanes_[k]->begin(event(k)) || read_first;
  if (read_first) t.submit_and_wait();
  int64_t T = 0;
  for (size_t k = 0; k < lanes(); ++k) {
    verifies_[k] = false;
    if (!lane_busy(k)) continue;
    advanced[static_cast<size_t>(lane_image(k))] = true;
    verifies_[k] = lanes_[k]->prepare(event(k));  // false: a skipped round, committed
    if (verifies_[k]) T = std::max(T, lanes_[k]->queries());
  }
  if (T == 0) return;  // every lane skipped its round
  std::vector<GptQueries> queries;
  for (size_t k = 0; k < lanes(); ++k) queries.push_back(lane_queries(k, T));
  const GptBatch& batch = t.batch(GptQueries::ragged(queries));
  const int64_t L = static_cast<int64_t>(lanes());
  for (size_t k = 0; k < lanes(); ++k)
    if (verifies_[k]) lanes_[k]->record_into(batch, static_cast<int64_t>(k), L, T);
  const GptOutputs out = t.forward(batch);
  const StrategyInputs& in = images_[0].in;  // the settings every image shares (batch_strategy.cpp)
  ops::sampler(t.stream(), out.logits, {}, in.sampler.op_params(vocab(), 0, ops::SampleMode::None, 0),
               probs_.view().rows(0, L * T), {});
  for (size_t k = 0; k < lanes(); ++k)
    if (verifies_[k])
      lanes_[k]->record_after(probs_.view().rows(static_cast<int64_t>(k) * T, T), out.hidden, static_cast<int64_t>(k),
                              L, T);
  t.submit_and_wait();
  for (size_t k = 0; k < lanes(); ++k)
    if (verifies_[k]) lanes_[k]->finish(event(k));
}

void set_eagle_factories(StrategyDescriptor& d, EagleOptions (*parse)(const OptionValues&)) {
  const std::string name = d.name;
  d.make = [name, parse](const ModelSet& m, const StrategyInputs& in,
                         const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<EagleStrategy>(name, m, in, parse(o));
  };
  d.make_batch = [name, parse](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                               int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    return std::make_unique<EagleBatchStrategy>(name, m, in, parse(o), lanes);
  };
  d.continuous_batching = true;
}

}  // namespace vkspec
