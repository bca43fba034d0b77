#pragma once
// The viewer application: window, shared compute/graphics device, models or a trace, the decode
// worker, up to two lanes (runs side by side), the timeline, kiosk cycling, capture and recording.
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "decoding/trace_reader.h"
#include "frontend/model_loading.h"
#include "viewer/canvas.h"
#include "viewer/decode_worker.h"
#include "viewer/frame_writer.h"
#include "viewer/gui.h"
#include "viewer/swapchain.h"
#include "viewer/viewer_options.h"
#include "viewer/window.h"

namespace vkspec::viewer {

// Async-signal-safe: makes App::run() return after the current frame.
void request_stop(int signal);
bool stop_requested();

// Thrown when only a new device helps (the device was lost); the kiosk restarts the viewer.
class RestartRequired : public Error {
 public:
  using Error::Error;
};

struct LaneView {
  std::shared_ptr<RunRecord> record;
  std::string label;            // method and its options
  MethodOptions options;
  std::unique_ptr<Canvas> canvas;
  std::vector<std::shared_ptr<const StepFrame>> frames;  // snapshot taken each UI frame
  const RunRecord* shown_record = nullptr;
  size_t shown_step = SIZE_MAX;
  std::vector<IslandLabel> islands;  // of the shown step
  ImVec2 p0{}, p1{};                 // where the canvas was drawn this frame
};

struct Timeline {
  int64_t step = 0;      // displayed step index
  bool follow = true;    // live: keep showing the newest step
  bool playing = false;  // replay: advance at the replay speed
  double position = 0;   // fractional step while playing
  int64_t pinned = -1;   // --step K until the user moves the timeline
};

// The run panel's editable settings.
struct Controls {
  int method = 0, compare = -1;  // indices into strategy_names(); -1: no comparison
  char options[256] = {}, compare_options[256] = {};
  int class_id = 0;
  long long seed = 0;
  SamplerSettings sampler;
  int trace_image = 0, trace_compare = -1;
};

class App {
 public:
  // kiosk_counter: the kiosk's run number, kept by the caller so a restarted viewer goes on with
  // the next run instead of repeating the one that failed.
  App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Until the window closes or the screenshot is written; returns the exit code.
  int run();

 private:
  // Setup (app.cpp).
  void create_device();
  void load_models();
  std::unique_ptr<FrameDecoder> make_decoder();
  // Runs (app.cpp).
  void start_live(const std::vector<std::pair<std::string, MethodOptions>>& methods, int64_t class_id, uint64_t seed,
                  const SamplerSettings& sampler);
  void start_replay(int64_t image, int64_t compare);
  void start_from_controls();
  void start_kiosk_run();
  void install_lanes(std::vector<Lane> lanes, std::vector<LaneView> views);
  // Frame (app.cpp).
  void frame();
  void update_timeline(double dt);
  void update_canvases();
  void kiosk_tick();
  bool settled() const;
  void on_capture(uint64_t frame_number, Image image);
  void write_layout() const;
  void save_trace() const;
  // UI (app_ui.cpp).
  void build_ui();
  void build_run_panel();
  void build_overlay_panel();
  void build_timeline_panel(float x, float y, float w, float h);
  void build_canvas_area(float x, float y, float w, float h, float caption_scale);
  void build_kiosk_caption(float x, float y, float w, float h);
  void handle_keys();
  int64_t available_steps() const;
  std::string lane_title(const LaneView& l) const;

  ViewerOptions opt_;
  std::shared_ptr<Instance> instance_;
  std::unique_ptr<Window> window_;
  std::unique_ptr<Context> ctx_;
  frontend::LoadedModels models_;
  std::unique_ptr<VqModel> vq_;           // the frame decoder's
  std::string decoder_note_;  // why the palette is shown instead of the VQ decoder
  std::optional<Trace> trace_;
  int64_t grid_ = 0, num_classes_ = 0;
  std::vector<std::string> methods_;
  std::unique_ptr<Swapchain> swapchain_;
  std::unique_ptr<Gui> gui_;
  std::unique_ptr<CanvasRenderer> canvas_renderer_;
  std::unique_ptr<DecodeWorker> worker_;
  std::unique_ptr<FrameWriter> writer_;
  std::vector<LaneView> lanes_;
  Timeline timeline_;
  Controls controls_;
  OverlaySettings overlays_;
  std::string ui_error_;  // a run that could not be started from the panel
  bool start_requested_ = false;

  // Kiosk.
  int64_t& kiosk_index_;
  std::set<std::string> kiosk_unavailable_;
  std::optional<std::chrono::steady_clock::time_point> kiosk_next_;

  // Frames, capture, timing.
  using Clock = std::chrono::steady_clock;
  Clock::time_point started_, last_frame_;
  uint64_t frames_ = 0, screenshot_frame_ = 0;
  bool done_ = false;
  std::string layout_json_;
  // Frame times in 0.5 ms buckets (constant memory for kiosks that run for days).
  struct FrameTimes {
    std::vector<uint64_t> buckets = std::vector<uint64_t>(2001, 0);
    uint64_t count = 0;
    void add(double ms);
    double percentile(double q) const;
  };
  FrameTimes interval_decoding_, interval_idle_, work_;
  bool decoding_ = false;  // a run was in progress when the last frame began
};

}  // namespace vkspec::viewer
