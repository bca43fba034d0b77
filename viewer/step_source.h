#pragma once
// Where a run's steps come from: a decoding strategy running on the models (live), or a trace's
// events replayed without the model. Both yield StepEvents with their committed grid.
#include <memory>
#include <string>

#include "decoding/strategy.h"
#include "decoding/trace_reader.h"

namespace vkspec::viewer {

class StepSource {
 public:
  virtual ~StepSource() = default;
  virtual bool done() const = 0;
  // The next step's event, grid included. Throws Error when the run cannot go on.
  virtual StepEvent next() = 0;
};

// Creates the strategy on the first next(), so that it is built (and fails) on the decode thread.
class StrategySource : public StepSource {
 public:
  StrategySource(std::string method, const ModelSet& models, StrategyInputs inputs);
  bool done() const override;
  StepEvent next() override;

 private:
  std::string method_;
  ModelSet models_;
  StrategyInputs inputs_;
  std::unique_ptr<Strategy> strategy_;
};

class TraceSource : public StepSource {
 public:
  // An image traced without events replays as one step showing the final grid.
  explicit TraceSource(Generation image);
  bool done() const override { return next_ >= events_; }
  StepEvent next() override;

 private:
  Generation image_;
  GridReplay replay_;
  size_t next_ = 0, events_ = 0;
};

}  // namespace vkspec::viewer
