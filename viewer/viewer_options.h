#pragma once
// Command-line options of vkspec-viewer.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "frontend/model_catalog.h"
#include "frontend/sampler_options.h"

namespace vkspec::viewer {

struct ViewerOptions {
  frontend::ModelFiles models;  // none given: the shipped models
  // What to run. Empty method: the first of strategy_names().
  std::string method;
  MethodOptions method_options;
  std::string compare;  // a second method shown side by side on the same condition and seed
  MethodOptions compare_options;
  // The condition: a class (class-conditional models) or a prompt (prompt-driven ones, Janus-Pro).
  int64_t class_id = 0;
  bool class_given = false;
  std::optional<std::string> prompt;
  uint64_t seed = 0;
  frontend::SamplerOverrides sampler;

  // Replay instead of running the model.
  std::string trace;
  int64_t trace_image = 0, trace_compare = -1;

  bool kiosk = false;
  double kiosk_hold_s = 4.0;
  std::string kiosk_prompts;  // a file of prompts the kiosk cycles (one a line); "": examples

  // Output and automation.
  std::string record_dir, screenshot, layout_file, save_trace;
  int64_t frames = 0;      // with --screenshot: frames to render at least
  int64_t step = -1;       // show this step (timeline pinned); -1 follows the run
  double timeout_s = 600;  // --screenshot gives up after this long
  int width = 1280, height = 720;
  double fps = 60;           // frame cap; 0 = none
  double replay_speed = 30;  // steps per second when playing a replay
  uint32_t batch_limit = 6;  // GPU commands per submission while decoding (ContextOptions::batch_limit)
  uint32_t overlays = 0;     // OverlaySettings::show
  bool overlays_given = false;
};

extern const char* kViewerUsage;

// Throws Error naming the option when an option is unknown, malformed or out of range.
ViewerOptions parse_viewer_options(const std::vector<std::string>& args);

}  // namespace vkspec::viewer
