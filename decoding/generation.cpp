#include "decoding/generation.h"

#include <chrono>

namespace vkspec {

double Generation::accepted_length() const {
  return nfe ? static_cast<double>(tokens.size()) / static_cast<double>(nfe) : 0.0;
}

Generation generate_one(const std::string& method, const ModelSet& models, const StrategyInputs& in, bool keep_events,
                        const std::function<void(const StepEvent&)>& on_event) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Strategy> strategy = make_strategy(method, models, in);
  Generation g;
  g.method = method;
  const auto* label = dynamic_cast<const ClassLabel*>(in.condition.get());
  g.class_id = label ? label->id() : -1;
  g.condition = in.condition ? in.condition->describe() : "";
  g.seed = in.seed;
  while (!strategy->done()) {
    StepEvent e = strategy->step();
    g.device_ms += e.device_ms;
    g.nfe = e.nfe;
    g.draft_forwards = e.draft_forwards;
    g.head_forwards = e.head_forwards;
    for (const auto& [stage_name, ms] : e.device_ms_by_stage) g.device_ms_by_stage[stage_name] += ms;
    g.islands += static_cast<int64_t>(e.islands.size());
    if (on_event) on_event(e);
    if (keep_events) g.events.push_back(std::move(e));
  }
  g.tokens = strategy->grid();
  g.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return g;
}

}  // namespace vkspec
