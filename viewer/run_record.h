#pragma once
// One run as the viewer shows it: every step's event with the image decoded after it. The decode
// worker appends, the UI thread reads; frames are immutable once added, so readers share them.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "decoding/step_event.h"
#include "viewer/run_condition.h"

namespace vkspec::viewer {

struct DecodedImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4
};

struct StepFrame {
  StepEvent event;  // with its grid
  DecodedImage image;
};

enum class RunState { Running, Finished, Failed, Cancelled };

class RunRecord {
 public:
  RunRecord(std::string method, RunCondition condition, uint64_t seed, int64_t grid_size);

  const std::string& method() const { return method_; }
  const RunCondition& condition() const { return condition_; }
  int64_t class_id() const { return condition_.class_id; }  // -1 for a prompt run
  const std::string& prompt() const { return condition_.prompt; }
  uint64_t seed() const { return seed_; }
  int64_t grid_size() const { return grid_size_; }
  int64_t tokens() const { return grid_size_ * grid_size_; }

  void add(std::shared_ptr<const StepFrame> frame);
  void finish(RunState state, std::string error = {}, bool device_lost = false);

  size_t size() const;
  std::shared_ptr<const StepFrame> frame(size_t i) const;
  std::vector<std::shared_ptr<const StepFrame>> frames() const;
  RunState state() const;
  bool ended() const { return state() != RunState::Running; }
  std::string error() const;
  // The device was lost: only a new device (a restart of the viewer's Vulkan state) helps.
  bool device_lost() const;

 private:
  const std::string method_;
  const RunCondition condition_;
  const uint64_t seed_;
  const int64_t grid_size_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const StepFrame>> frames_;
  RunState state_ = RunState::Running;
  std::string error_;
  bool device_lost_ = false;
};

}  // namespace vkspec::viewer
