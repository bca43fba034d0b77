#pragma once
// The viewer application: its parts put together and the frame loop. The parts, each with one
// job: DeviceSession (instance, window, device), ViewerModels (models or a trace), Display
// (swapchain, ImGui, canvas renderer), Runs (lanes, decode worker, timeline), Capture (--record,
// --screenshot), Kiosk (unattended cycling), Ui (panels), FrameTimes (smoothness on exit).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "viewer/capture.h"
#include "viewer/device_session.h"
#include "viewer/display.h"
#include "viewer/frame_times.h"
#include "viewer/kiosk.h"
#include "viewer/runs.h"
#include "viewer/ui.h"
#include "viewer/viewer_models.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {

// Async-signal-safe: makes App::run() return after the current frame.
void request_stop(int signal);
bool stop_requested();

class App {
 public:
  // kiosk_counter: the kiosk's run number (see Kiosk).
  App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter);
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Until the window closes or the screenshot is written; returns the exit code.
  int run();

 private:
  // The trace, read before any window opens, so that a bad one fails at once.
  App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter, std::optional<Trace> replay);
  void start_from_controls();
  // The kiosk's prompts for a prompt-driven model, each checked against it; none for a class model.
  std::vector<std::string> checked_kiosk_prompts() const;
  void start_kiosk_run();
  // The prompt a kiosk visitor typed: its error under the box, or its runs.
  void start_visitor_run();
  void show_kiosk_run(const KioskRun& k, std::shared_ptr<const Condition> condition);
  void frame();

  // Declared in the order they depend on each other; destroyed in reverse.
  ViewerOptions opt_;
  DeviceSession session_;
  ViewerModels models_;
  Display display_;
  Runs runs_;
  Capture capture_;
  std::optional<Kiosk> kiosk_;
  Ui ui_;
  FrameTimes frame_times_;
};

}  // namespace vkspec::viewer
