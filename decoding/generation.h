#pragma once
// Runs a strategy to completion, collecting its events: the loop shared by `vkspec generate`,
// `vkspec bench` and the tests.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "decoding/strategy.h"

namespace vkspec {

struct Generation {
  std::string method;
  int64_t class_id = 0;   // the class label's id; -1 for other conditions (captions)
  std::string condition;  // Condition::describe()
  std::string prompt;     // the text prompt it was generated from (Condition::prompt()), or ""
  uint64_t seed = 0;
  std::vector<int32_t> tokens;  // the final grid, raster order
  std::vector<StepEvent> events;
  int64_t nfe = 0, draft_forwards = 0, head_forwards = 0;
  std::map<std::string, double> device_ms_by_stage;  // summed over the steps (timestamps only)
  KernelTimes device_ms_by_kernel;                   // the same per (stage, kernel), with calls
  int64_t islands = 0;                               // rejection islands over all steps (MuLo-SD)
  // Images in each of this one's forwards (generate_batch's lanes); wall_ms is then this image's
  // latency inside the batch and device_ms, device_ms_by_stage and device_ms_by_kernel its share.
  int64_t batch = 1;
  double wall_ms = 0, device_ms = 0;
  double accepted_length() const;  // committed tokens per target forward
};

// on_event (optional) sees every event as it happens (progress bars, the viewer).
// keep_events = false drops per-step events (long benchmarks), keeping only the totals.
Generation generate_one(const std::string& method, const ModelSet& models, const StrategyInputs& in,
                        bool keep_events = true, const std::function<void(const StepEvent&)>& on_event = {});

// The images of `inputs` decoded `lanes` per forward (0: all of them; the method's
// StrategyDescriptor::make_batch; one lane: generate_one for each). With continuous batching an
// input takes the lane of an image that finished, else the inputs go in groups of `lanes`. One
// Generation per input, in order, with the tokens generate_one gives it; its wall_ms from the step
// that first advanced it to the one that completed it. on_event sees (image index, event).
std::vector<Generation> generate_batch(const std::string& method, const ModelSet& models,
                                       const std::vector<StrategyInputs>& inputs, bool keep_events = true,
                                       const std::function<void(size_t, const StepEvent&)>& on_event = {},
                                       int64_t lanes = 0);

}  // namespace vkspec
