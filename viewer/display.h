#pragma once
// What the viewer draws with: the window's swapchain, Dear ImGui and the canvas renderer. A frame
// is the UI built between begin_ui() and end_ui(), then present(): the canvases' uploads, the UI's
// draw lists (the canvases are drawn from their callbacks), submitted and presented.
#include <memory>
#include <optional>
#include <vector>

#include "viewer/canvas.h"
#include "viewer/device_session.h"
#include "viewer/gui.h"
#include "viewer/lane_view.h"
#include "viewer/swapchain.h"

namespace vkspec::viewer {

class Display {
 public:
  explicit Display(DeviceSession& session);
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

  Swapchain& swapchain() { return *swapchain_; }
  CanvasRenderer& canvas_renderer() { return *canvas_renderer_; }

  void begin_ui() { gui_->new_frame(); }
  void end_ui() { gui_->end_frame(); }
  // capture: the frame comes back through Swapchain::on_capture. None when there was no frame to
  // draw this time (window minimised, swapchain rebuilt).
  std::optional<FrameTarget> present(const std::vector<LaneView>& lanes, bool capture);

 private:
  Window& window_;
  // Destroyed before the window's surface (DeviceSession outlives the Display).
  std::unique_ptr<Swapchain> swapchain_;
  std::unique_ptr<Gui> gui_;
  std::unique_ptr<CanvasRenderer> canvas_renderer_;
};

}  // namespace vkspec::viewer
