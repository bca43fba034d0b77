#include "decoding/strategy.h"

#include <chrono>

#include "common/error.h"

namespace vkspec {
namespace {

const StrategyInputs& checked(const ModelSet& models, const StrategyInputs& in) {
  if (!models.ctx || !models.target) throw Error("a strategy needs a context and a target model");
  if (!in.condition) throw Error("a strategy needs a condition (a class label or caption embeddings)");
  in.condition->check(models.target->config());
  in.sampler.validate();
  return in;
}

}  // namespace

Strategy::Strategy(std::string method, const ModelSet& models, const StrategyInputs& in, int64_t max_queries,
                   int64_t scratch_slots, bool prefill)
    : models_(models),
      in_(checked(models, in)),
      method_(std::move(method)),
      target_(models, in, method_, max_queries, scratch_slots, prefill) {
  grid_.assign(static_cast<size_t>(models.target->config().image_tokens()), kUndecided);
}

StepEvent Strategy::step() {
  if (done()) throw Error(method_ + ": step() after the image is complete");
  const auto t0 = std::chrono::steady_clock::now();
  StepEvent e;
  target_.begin_step();
  decode(e);
  e.device_ms = target_.device_ms();
  e.device_ms_by_stage = target_.ms_by_stage();
  e.device_ms_by_kernel = target_.ms_by_kernel();
  e.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  e.step = step_++;
  e.grid = grid_;
  e.committed = committed_;
  e.nfe = nfe_;
  e.draft_forwards = draft_forwards_;
  e.head_forwards = head_forwards_;
  e.done = done();
  return e;
}

int32_t Strategy::checked_token(uint32_t token, int64_t position) const {
  if (token >= static_cast<uint32_t>(vocab()))
    throw Error(method_ + ": the GPU resolved position " + std::to_string(position) + " to token " +
                std::to_string(token) + ", outside the vocabulary");
  return static_cast<int32_t>(token);
}

std::unique_ptr<Strategy> make_strategy(const std::string& method, const ModelSet& models, const StrategyInputs& in) {
  const StrategyDescriptor& d = find_strategy(method);
  return d.make(models, in, d.values(in.options));
}

}  // namespace vkspec
