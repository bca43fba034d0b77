#pragma once
// What the viewer writes while it runs: every frame as PNG (--record DIR), and the screenshot with
// its layout (--screenshot, --layout) at the first frame after --frames at which the runs it
// waits for are shown; --screenshot gives up after --timeout.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/image/image.h"
#include "viewer/frame_writer.h"
#include "viewer/runs.h"
#include "viewer/swapchain.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {

class Capture {
 public:
  explicit Capture(const ViewerOptions& options);  // creates the --record folder

  // Whether the coming frame is the screenshot (`presented` frames so far). Throws when a run it
  // waits for failed.
  bool screenshot_due(uint64_t presented, const Runs& runs) const;
  // Whether a frame must come back to the host (recording, or the screenshot).
  bool copy_back(bool screenshot) const { return screenshot || writer_; }
  // The screenshot frame was presented: remember it and where each lane was drawn.
  void took_screenshot(const FrameTarget& frame, const Runs& runs, int64_t grid);
  // Swapchain::on_capture: a frame came back.
  void on_frame(uint64_t frame_number, Image image);
  bool done() const { return done_; }

  // Once per frame: a writer's error; the timeout.
  void check();
  // After the last frame, all captures delivered: waits for the recording to be written.
  void finish_recording();
  // Throws when the screenshot asked for was not taken (the window was closed first).
  void confirm_screenshot() const;

 private:
  const ViewerOptions& opt_;
  std::unique_ptr<FrameWriter> writer_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  uint64_t screenshot_frame_ = 0;
  bool done_ = false;
  std::string layout_json_;
};

}  // namespace vkspec::viewer
