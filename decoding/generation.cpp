#include "decoding/generation.h"

#include <chrono>

#include "decoding/batch_strategy.h"
#include "decoding/strategy_registry.h"

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
  g.prompt = in.condition ? in.condition->prompt() : "";
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

// One batch strategy over every input, `lanes` images per forward. An image's wall-clock runs from
// the step that first advanced it (or the strategy's construction, for the first lanes) to the step
// that completed it; each step's GPU time is shared by the images it advanced.
std::vector<Generation> run_batch(const std::string& method, const ModelSet& models,
                                  const std::vector<StrategyInputs>& inputs, bool keep_events,
                                  const std::function<void(size_t, const StepEvent&)>& on_event, int64_t lanes) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  std::unique_ptr<BatchStrategy> strategy = make_batch_strategy(method, models, inputs, lanes);
  std::vector<Generation> out;
  for (const StrategyInputs& in : inputs) out.push_back(started(method, in));
  std::vector<Clock::time_point> start(inputs.size());
  std::vector<bool> seen(inputs.size(), false);
  for (bool first_step = true; !strategy->done(); first_step = false) {
    const Clock::time_point step_start = first_step ? t0 : Clock::now();
    std::vector<BatchEvent> events = strategy->step();
    const double share = 1.0 / static_cast<double>(std::max<size_t>(events.size(), 1));
    for (BatchEvent& b : events) {
      Generation& g = out[b.image];
      if (!seen[b.image]) start[b.image] = step_start;
      seen[b.image] = true;
      const bool done = b.event.done;
      if (on_event) on_event(b.image, b.event);
      add_event(g, std::move(b.event), share, keep_events);
      if (done) g.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start[b.image]).count();
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].tokens = strategy->grid(i);
    out[i].batch = lanes;
  }
  return out;
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
                                       const std::function<void(size_t, const StepEvent&)>& on_event, int64_t lanes) {
  const int64_t images = static_cast<int64_t>(inputs.size());
  if (lanes <= 0 || lanes > images) lanes = images;
  if (lanes == 1) {  // one image per forward, one after another
    std::vector<Generation> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::function<void(const StepEvent&)> each;
      if (on_event) each = [&](const StepEvent& e) { on_event(i, e); };
      out.push_back(generate_one(method, models, inputs[i], keep_events, each));
    }
    return out;
  }
  if (lanes < images && !find_strategy(method).continuous_batching) {  // groups of `lanes`, each to its end
    std::vector<Generation> out;
    for (size_t first = 0; first < inputs.size(); first += static_cast<size_t>(lanes)) {
      const size_t n = std::min(static_cast<size_t>(lanes), inputs.size() - first);
      std::function<void(size_t, const StepEvent&)> each;
      if (on_event) each = [&](size_t i, const StepEvent& e) { on_event(first + i, e); };
      for (Generation& g : generate_batch(method, models,
                                          {inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                           inputs.begin() + static_cast<std::ptrdiff_t>(first + n)},
                                          keep_events, each))
        out.push_back(std::move(g));
    }
    return out;
  }
  return run_batch(method, models, inputs, keep_events, on_event, lanes);
}

}  // namespace vkspec
