#include "viewer/run_record.h"

namespace vkspec::viewer {

RunRecord::RunRecord(std::string method, RunCondition condition, uint64_t seed, int64_t grid_size)
    : method_(std::move(method)), condition_(std::move(condition)), seed_(seed), grid_size_(grid_size) {}

void RunRecord::add(std::shared_ptr<const StepFrame> frame) {
  std::lock_guard<std::mutex> lock(mutex_);
  frames_.push_back(std::move(frame));
}

void RunRecord::finish(RunState state, std::string error, bool device_lost) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != RunState::Running) return;
  state_ = state;
  error_ = std::move(error);
  device_lost_ = device_lost;
}

size_t RunRecord::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return frames_.size();
}

std::shared_ptr<const StepFrame> RunRecord::frame(size_t i) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return i < frames_.size() ? frames_[i] : nullptr;
}

std::vector<std::shared_ptr<const StepFrame>> RunRecord::frames() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return frames_;
}

RunState RunRecord::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

std::string RunRecord::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool RunRecord::device_lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return device_lost_;
}

}  // namespace vkspec::viewer
