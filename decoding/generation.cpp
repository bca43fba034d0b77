#include "decoding/generation.h"

#include <chrono>

#include "decoding/batch_strategy.h"

namespace vkspec {

double Generation::accepted_length() const {
  return nfe ? static_cast<double>(tokens.size()) / static_cast<double>(nfe) : 0.0;
}

namespace {

Generation started(const std::string& method, const StrategyInputs& in) {
  Generation g;
  g.method = method;
  const auto* label = dynamic_cast<const ClassLabel*>(in.condition.get());
  g.class_id = label ? label->id() : -1;
  g.condition = in.condition ? in.condition->describe() : "";
  g.seed = in.seed;
  return g;
}

// Adds one step's event; share: this image's part of the step's GPU time.
void add_event(Generation& g, StepEvent&& e, double share, bool keep_events) {
  g.device_ms += e.device_ms * share;
  g.nfe = e.nfe;
  g.draft_forwards = e.draft_forwards;
  g.head_forwards = e.head_forwards;
  for (const auto& [stage_name, ms] : e.device_ms_by_stage) g.device_ms_by_stage[stage_name] += ms * share;
  for (const auto& [key, t] : e.device_ms_by_kernel) {
    KernelTime& k = g.device_ms_by_kernel[key];
    k.ms += t.ms * share;
    k.calls += t.calls;
  }
  g.islands += static_cast<int64_t>(e.islands.size());
  if (keep_events) g.events.push_back(std::move(e));
}

}  // namespace

Generation generate_one(const std::string& method, const ModelSet& models, const StrategyInputs& in, bool keep_events,
                        const std::function<void(const StepEvent&)>& on_event) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Strategy> strategy = make_strategy(method, models, in);
  Generation g = started(method, in);
  while (!strategy->done()) {
    StepEvent e = strategy->step();
    if (on_event) on_event(e);
    add_event(g, std::move(e), 1.0, keep_events);
  }
  g.tokens = strategy->grid();
  g.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return g;
}

std::vector<Generation> generate_batch(const std::string& method, const ModelSet& models,
                                       const std::vector<StrategyInputs>& inputs, bool keep_events,
                                       const std::function<void(size_t, const StepEvent&)>& on_event) {
  if (inputs.size() == 1) {
    std::function<void(const StepEvent&)> each;
    if (on_event) each = [&](const StepEvent& e) { on_event(0, e); };
    return {generate_one(method, models, inputs[0], keep_events, each)};
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<BatchStrategy> strategy = make_batch_strategy(method, models, inputs);
  std::vector<Generation> out;
  for (const StrategyInputs& in : inputs) out.push_back(started(method, in));
  const double share = 1.0 / static_cast<double>(inputs.size());
  while (!strategy->done()) {
    for (BatchEvent& b : strategy->step()) {
      if (on_event) on_event(b.image, b.event);
      add_event(out[b.image], std::move(b.event), share, keep_events);
    }
  }
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].tokens = strategy->grid(i);
    out[i].batch = static_cast<int64_t>(inputs.size());
    out[i].wall_ms = wall;
  }
  return out;
}

}  // namespace vkspec
