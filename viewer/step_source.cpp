#include "viewer/step_source.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec::viewer {

StrategySource::StrategySource(std::string method, const ModelSet& models, StrategyInputs inputs)
    : method_(std::move(method)), models_(models), inputs_(std::move(inputs)) {}

bool StrategySource::done() const { return strategy_ && strategy_->done(); }

StepEvent StrategySource::next() {
  if (!strategy_) strategy_ = make_strategy(method_, models_, inputs_);
  if (strategy_->done()) throw Error(method_ + ": the run is already complete");
  return strategy_->step();
}

TraceSource::TraceSource(Generation image)
    : image_(std::move(image)), replay_(image_.tokens), events_(std::max<size_t>(1, image_.events.size())) {}

StepEvent TraceSource::next() {
  if (done()) throw Error("trace replay: no steps left");
  if (image_.events.empty()) {
    StepEvent e;
    e.grid = image_.tokens;
    e.committed = static_cast<int64_t>(image_.tokens.size());
    e.nfe = image_.nfe;
    e.draft_forwards = image_.draft_forwards;
    e.wall_ms = image_.wall_ms;
    e.device_ms = image_.device_ms;
    e.done = true;
    ++next_;
    return e;
  }
  StepEvent e = image_.events[next_++];
  e.grid = replay_.apply(e);
  e.done = done();
  return e;
}

}  // namespace vkspec::viewer
