#pragma once
// Kiosk mode: cycles methods (a speculative one racing ar) and classes, or a prompt-driven
// model's prompts, on its own, holds each finished image for a moment, leaves out methods that
// failed before their first step (a model they need is missing) and moves on after any failure.
// A visitor's prompt starts a run at once and is held longer.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "frontend/model_loading.h"
#include "viewer/lane_view.h"

namespace vkspec::viewer {

// Thrown when only a new device helps (the device was lost); the kiosk restarts the viewer.
class RestartRequired : public Error {
 public:
  using Error::Error;
};

struct KioskRun {
  int64_t number = 0;
  std::vector<frontend::MethodRun> runs;
  int64_t class_id = 0;  // -1 with a prompt
  std::string prompt;    // a prompt-driven model's: the list's, or a visitor's
  bool visitor = false;
  uint64_t seed = 0;
};

class Kiosk {
 public:
  // counter: the run number, kept by the caller so that a restarted viewer goes on with the next
  // run instead of repeating the one that failed.
  // prompts: what a prompt-driven model cycles (kiosk_prompts.h); empty for a class model.
  Kiosk(int64_t& counter, std::vector<std::string> methods, uint64_t first_seed, double hold_s,
        std::vector<std::string> prompts = {});

  bool takes_prompts() const { return !prompts_.empty(); }
  // The next run: the next method on the next class, or on the next prompt of the list.
  KioskRun next(int64_t num_classes);
  // A run of the prompt a visitor typed, on the next method.
  KioskRun visit(const std::string& prompt);
  // Whether the next run is due: every lane has ended and has been held long enough. Throws
  // RestartRequired when a lane lost the device.
  bool due(const std::vector<LaneView>& lanes);

 private:
  using Clock = std::chrono::steady_clock;
  KioskRun start_next();

  int64_t& counter_;
  std::vector<std::string> methods_;
  uint64_t first_seed_;
  double hold_s_;
  std::vector<std::string> prompts_;
  bool visitor_ = false;  // the runs shown are a visitor's
  std::set<std::string> unavailable_;
  std::optional<Clock::time_point> next_;
};

}  // namespace vkspec::viewer
