#pragma once
// Several images decoded together (issue 34): every target forward serves the images in its lanes
// (all of them, or with continuous batching a finished image's lane goes to the next), each image
// with its own condition, seed, tokens and KV rows, through one TargetSession of lanes.
// An image's tokens are those it gets decoded alone, seed for seed (each row summed in the same
// order whatever the rows beside it, the kernels chosen for the strategy's most queries rather
// than a forward's: GptBatch::plan_queries; tests/test_batch_decoding.cpp, also under the GPU
// kernels). A method that can run so registers StrategyDescriptor::make_batch beside its
// single-image factory.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/strategy.h"

namespace vkspec {

struct BatchEvent {
  size_t image = 0;  // index into the inputs the strategy was made with
  StepEvent event;
};

class BatchStrategy {
 public:
  virtual ~BatchStrategy() = default;
  BatchStrategy(const BatchStrategy&) = delete;
  BatchStrategy& operator=(const BatchStrategy&) = delete;

  const std::string& name() const { return method_; }
  // Advances every image in a lane by one step (decode(); all images when the lanes are all of
  // them); an event per image advanced, in image order, each with its own grid and counters and
  // its own step number. The step's wall-clock and GPU time are the batch's, in every event.
  // Throws Error when all are done.
  std::vector<BatchEvent> step();

  size_t images() const { return images_.size(); }
  bool done() const;
  bool done(size_t image) const;
  const std::vector<int32_t>& grid(size_t image) const { return images_[image].grid; }
  int64_t nfe(size_t image) const { return images_[image].nfe; }

 protected:
  // lanes: images in each forward (0: all of `in`); the target session is made for the first
  // `lanes` inputs (their conditions prefilled), later inputs take the lanes of finished images.
  // prefill: as TargetSession's.
  BatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in, int64_t max_queries,
                int64_t scratch_slots = 0, int64_t lanes = 0, bool prefill = true);
  // One step: records and submits its GPU work, commits tokens (the images' grid, committed, nfe)
  // and fills events[i] for each image i it advanced (others stay untouched and are not reported).
  virtual void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) = 0;

  struct Image {
    StrategyInputs in;
    std::vector<int32_t> grid;
    int64_t committed = 0, nfe = 0;
    int64_t steps = 0;           // steps that advanced it: its events' step numbers, as when decoded alone
    int64_t head_forwards = 0;   // steps whose draft heads ran for it (StepEvent::head_forwards)
    int64_t draft_forwards = 0;  // drafter forwards run for it (StepEvent::draft_forwards)
  };
  int64_t image_tokens() const { return models_.target->config().image_tokens(); }
  int64_t vocab() const { return models_.target->config().vocab_size; }
  TargetSession& target() { return target_; }
  const TargetSession& target() const { return target_; }
  int32_t checked_token(uint32_t token, size_t image, int64_t position) const;

  ModelSet models_;
  std::vector<Image> images_;
  int64_t step_ = 0;

 private:
  std::string method_;
  TargetSession target_;
};

// The method's descriptor's batch factory, `lanes` images per forward (0: all of `in`; fewer only
// with StrategyDescriptor::continuous_batching); throws Error naming the method when it has none,
// or when the inputs disagree on what one forward shares (method options, sampler settings).
std::unique_ptr<BatchStrategy> make_batch_strategy(const std::string& method, const ModelSet& models,
                                                   const std::vector<StrategyInputs>& in, int64_t lanes = 0);

}  // namespace vkspec
