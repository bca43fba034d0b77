#pragma once
// The viewer's Dear ImGui panels: run settings and overlays (ui.cpp), the canvases with their NFE
// race bars and the kiosk caption (ui_lanes.cpp), the timeline with live statistics
// (ui_timeline.cpp), a prompt-driven model's prompt box (ui_prompt.cpp). Run, Generate, Show, the
// Next buttons and Enter in a prompt box only ask for a start (take_start_request): runs start
// between frames, never while a draw list refers to the canvases they replace.
#include <string>
#include <vector>

#include "viewer/controls.h"
#include "viewer/device_session.h"
#include "viewer/overlay_settings.h"
#include "viewer/runs.h"
#include "viewer/viewer_models.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {

class Ui {
 public:
  Ui(const ViewerOptions& options, DeviceSession& session, const ViewerModels& models, Runs& runs,
     std::vector<std::string> methods);

  // The panels of this frame, between Display::begin_ui() and end_ui().
  void build();

  const std::vector<std::string>& methods() const { return methods_; }
  Controls& controls() { return controls_; }
  bool take_start_request();
  // Why the panel's last run could not start ("" once one did).
  void set_error(std::string error) { error_ = std::move(error); }
  const std::string& error() const { return error_; }

 private:
  void handle_keys();
  void build_run_panel();
  void build_trace_controls();
  void build_method_controls();
  void build_prompt_box();
  void build_kiosk_prompt_box();
  void build_overlay_panel();
  void build_canvas_area(float x, float y, float w, float h, float caption_scale);
  void build_timeline_panel(float x, float y, float w, float h);
  void build_kiosk_caption(float x, float y, float w, float h);
  std::string lane_title(const LaneView& l) const;
  void cell_tooltip(const LaneView& l, int64_t grid) const;

  const ViewerOptions& opt_;
  DeviceSession& session_;
  const ViewerModels& models_;
  Runs& runs_;
  std::vector<std::string> methods_;
  Controls controls_;
  OverlaySettings overlays_;
  std::string error_;
  bool start_requested_ = false;
};

}  // namespace vkspec::viewer
