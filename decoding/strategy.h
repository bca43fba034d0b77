#pragma once
// A decoding strategy: started with (models, condition, seed, sampler settings, method options),
// advanced by step(), which returns a StepEvent. Strategies never draw or print; they record
// GPU work through their TargetSession and read back only what the step's event needs. Each
// strategy registers a StrategyDescriptor (strategy_registry.h) beside its class.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/option_spec.h"
#include "decoding/sampler_settings.h"
#include "decoding/step_event.h"
#include "decoding/strategy_inputs.h"
#include "decoding/strategy_registry.h"
#include "decoding/target_session.h"
#include "engine/model/condition.h"
#include "engine/model/gpt.h"

namespace vkspec {

class Strategy {
 public:
  virtual ~Strategy() = default;
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  const std::string& name() const { return method_; }
  // Advances by one step (decode()), timing it and filling the event's common fields once;
  // throws Error when already done.
  StepEvent step();

  bool done() const { return committed_ == static_cast<int64_t>(grid_.size()); }
  const std::vector<int32_t>& grid() const { return grid_; }
  int64_t nfe() const { return nfe_; }

 protected:
  // max_queries: the most queries one target forward runs; scratch_slots: spare KV slots;
  // prefill: as TargetSession's.
  Strategy(std::string method, const ModelSet& models, const StrategyInputs& in, int64_t max_queries,
           int64_t scratch_slots = 0, bool prefill = true);
  // One step: records and submits its GPU work, commits tokens (grid_, committed_, nfe_,
  // draft_forwards_) and fills the event's position lists.
  virtual void decode(StepEvent& e) = 0;

  int64_t image_tokens() const { return static_cast<int64_t>(grid_.size()); }
  int64_t vocab() const { return models_.target->config().vocab_size; }
  int64_t grid_width() const { return models_.target->config().grid_size; }
  TargetSession& target() { return target_; }
  const TargetSession& target() const { return target_; }
  // Throws Error naming the method and position when the GPU produced a token outside the vocabulary.
  int32_t checked_token(uint32_t token, int64_t position) const;

  ModelSet models_;
  StrategyInputs in_;
  std::vector<int32_t> grid_;
  int64_t committed_ = 0, nfe_ = 0, draft_forwards_ = 0, head_forwards_ = 0, step_ = 0;

 private:
  std::string method_;
  TargetSession target_;
};

// The method's descriptor's factory (find_strategy(method).make); throws Error naming the method
// or option when the method is unknown or an option is bad.
std::unique_ptr<Strategy> make_strategy(const std::string& method, const ModelSet& models, const StrategyInputs& in);

}  // namespace vkspec
