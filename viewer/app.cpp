#include "viewer/app.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <sys/stat.h>
#include <thread>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <nlohmann/json.hpp>

#include "cli/model_paths.h"
#include "common/env.h"

namespace vkspec::viewer {
namespace {

constexpr int64_t kMaxQueries = 257;

volatile std::sig_atomic_t g_stop = 0;

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string label_of(const std::string& method, const MethodOptions& o) {
  return o.empty() ? method : method + " (" + format_method_options(o) + ")";
}


}  // namespace

void App::FrameTimes::add(double ms) {
  ++buckets[std::min<size_t>(buckets.size() - 1, static_cast<size_t>(std::max(0.0, ms) * 2.0))];
  ++count;
}

double App::FrameTimes::percentile(double q) const {
  const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count));
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets.size(); ++i)
    if ((seen += buckets[i]) > rank) return (static_cast<double>(i) + 0.5) / 2.0;
  return static_cast<double>(buckets.size()) / 2.0;
}

void request_stop(int) { g_stop = 1; }
bool stop_requested() { return g_stop != 0; }

App::App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter)
    : opt_(options), kiosk_index_(kiosk_counter) {
  if (!opt_.trace.empty()) {
    trace_ = read_trace(opt_.trace);
    const int64_t n = static_cast<int64_t>(trace_->images.size());
    if (opt_.trace_image >= n || opt_.trace_compare >= n)
      throw Error("trace " + opt_.trace + " holds " + std::to_string(n) + " image(s); --image and --compare-image "
                  "must be below that");
  }
  InstanceOptions io = InstanceOptions::from_environment();
  io.extensions = glfw.instance_extensions();
  instance_ = std::make_shared<Instance>(io);
  load_imgui_vulkan_functions(instance_->handle());
  window_ = std::make_unique<Window>(instance_, opt_.width, opt_.height, opt_.kiosk, "vkspec viewer");
  create_device();
  load_models();
  methods_ = strategy_names();

  swapchain_ = std::make_unique<Swapchain>(*ctx_, window_->surface(), window_->framebuffer_size());
  swapchain_->on_capture = [this](uint64_t n, Image im) { on_capture(n, std::move(im)); };
  gui_ = std::make_unique<Gui>(window_->handle(), *ctx_, *swapchain_);
  canvas_renderer_ = std::make_unique<CanvasRenderer>(*ctx_, swapchain_->render_pass());
  worker_ = std::make_unique<DecodeWorker>(make_decoder());
  if (!opt_.record_dir.empty()) {
    mkdir(opt_.record_dir.c_str(), 0755);
    struct stat st;
    if (stat(opt_.record_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Error("--record " + opt_.record_dir + ": not a directory and cannot be created");
    writer_ = std::make_unique<FrameWriter>();
  }
  if (opt_.overlays_given) overlays_.show = opt_.overlays;

  // The panel starts from the command line.
  auto index_of = [&](const std::string& m) {
    auto it = std::find(methods_.begin(), methods_.end(), m);
    if (it == methods_.end()) {
      std::string known;
      for (const auto& n : methods_) known += (known.empty() ? "" : ", ") + n;
      throw Error("unknown method '" + m + "' (known: " + known + ")");
    }
    return static_cast<int>(it - methods_.begin());
  };
  if (!opt_.method.empty() && !trace_) controls_.method = index_of(opt_.method);
  if (!opt_.compare.empty() && !trace_) controls_.compare = index_of(opt_.compare);
  std::snprintf(controls_.options, sizeof(controls_.options), "%s", format_method_options(opt_.method_options).c_str());
  std::snprintf(controls_.compare_options, sizeof(controls_.compare_options), "%s",
                format_method_options(opt_.compare_options).c_str());
  controls_.class_id = static_cast<int>(opt_.class_id);
  controls_.seed = static_cast<long long>(opt_.seed);
  controls_.trace_image = static_cast<int>(opt_.trace_image);
  controls_.trace_compare = static_cast<int>(opt_.trace_compare);
  if (gpt_) {
    controls_.sampler = SamplerSettings::from_defaults(gpt_->config().defaults);
    if (opt_.class_id >= num_classes_)
      throw Error("--class " + std::to_string(opt_.class_id) + " out of range: the model has classes 0.." +
                  std::to_string(num_classes_ - 1));
  }
  if (trace_) controls_.sampler = trace_->config.sampler;
  if (opt_.cfg) controls_.sampler.cfg = *opt_.cfg;
  if (opt_.temperature) controls_.sampler.temperature = *opt_.temperature;
  if (opt_.top_k) controls_.sampler.top_k = *opt_.top_k;
  if (opt_.top_p) controls_.sampler.top_p = *opt_.top_p;
  controls_.sampler.validate();
  timeline_.pinned = opt_.step;

  if (opt_.kiosk) start_kiosk_run();
  else if (trace_) start_replay(opt_.trace_image, opt_.trace_compare);
  else start_from_controls();
  if (!ui_error_.empty()) throw Error(ui_error_);
  started_ = last_frame_ = Clock::now();
}

App::~App() {
  // The decode thread first: it is the other user of the queue.
  worker_.reset();
  if (ctx_) {
    std::lock_guard<std::mutex> lock(ctx_->queue_mutex());
    vkQueueWaitIdle(ctx_->queue());
  }
  lanes_.clear();
  canvas_renderer_.reset();
  gui_.reset();
  swapchain_.reset();
  writer_.reset();
  vq_.reset();
  gpt_.reset();
  drafter_.reset();
  low_res_.reset();
  neighbours_.reset();
  heads_.reset();
  strategy_vq_.reset();
  ctx_.reset();
  window_.reset();
}

void App::create_device() {
  ContextOptions co = ContextOptions::from_environment();
  co.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  co.present_surface = window_->surface();
  co.batch_limit = opt_.batch_limit;
  const uint32_t preferred = instance_->preferred_device();
  try {
    ctx_ = std::make_unique<Context>(instance_, preferred, co);
    return;
  } catch (const Error& first) {
    // Another device may be able to present when the preferred one cannot (unless one was asked for).
    if (env::text(env::kDevice)) throw;
    for (uint32_t i = 0; i < instance_->devices().size(); ++i) {
      if (i == preferred) continue;
      try {
        ctx_ = std::make_unique<Context>(instance_, i, co);
        return;
      } catch (const Error&) {
      }
    }
    throw;
  }
}

void App::load_models() {
  if (trace_) {
    grid_ = trace_->config.grid_size;
    num_classes_ = 0;
    std::string path = opt_.vq;
    if (path.empty() && file_exists(cli::asset_dir() + "/fmnist_vq.safetensors"))
      path = cli::asset_dir() + "/fmnist_vq.safetensors";
    if (path.empty()) {
      decoder_note_ = "no VQ decoder given (--vq FILE): showing token ids as colours";
      return;
    }
    try {
      vq_ = std::make_unique<VqModel>(*ctx_, path, DType::F16, 1, grid_);
      if (vq_->config().codebook_size < trace_->config.vocab_size) {
        decoder_note_ = "VQ decoder " + path + " has " + std::to_string(vq_->config().codebook_size) +
                        " codes, the trace uses " + std::to_string(trace_->config.vocab_size) +
                        ": showing token ids as colours";
        vq_.reset();
      }
    } catch (const Error& e) {
      if (!opt_.vq.empty()) throw;  // asked for explicitly: say why it cannot be used
      decoder_note_ = std::string("shipped VQ decoder unusable (") + e.what() + "): showing token ids as colours";
      vq_.reset();
    }
    return;
  }
  const std::string model =
      opt_.model.empty() ? cli::shipped_model("fmnist_gpt16.safetensors", "--model") : opt_.model;
  const std::string vq = opt_.vq.empty() ? cli::shipped_model("fmnist_vq.safetensors", "--vq") : opt_.vq;
  // Sized for any window the panel may ask for (a window of L drafts needs L + 1 queries), not
  // only the command line's: the model is loaded once per viewer.
  GptOptions gopt;
  gopt.max_queries = kMaxQueries;
  gpt_ = std::make_unique<Gpt>(*ctx_, model, gopt);
  grid_ = gpt_->config().grid_size;
  num_classes_ = gpt_->config().num_classes;
  vq_ = std::make_unique<VqModel>(*ctx_, vq, DType::F16, 1, grid_);
  if (vq_->config().codebook_size < gpt_->config().vocab_size)
    throw Error("VQ decoder " + vq + " has " + std::to_string(vq_->config().codebook_size) + " codes but model " +
                model + " samples from " + std::to_string(gpt_->config().vocab_size));
  // The shipped drafter when there is one, so that draft-model methods run from the panel too.
  // Shipped companions are trained for the shipped model only: with --model they come from flags.
  const bool shipped = opt_.model.empty();
  std::string drafter = opt_.drafter;
  if (shipped && drafter.empty() && file_exists(cli::asset_dir() + "/fmnist_drafter16.safetensors"))
    drafter = cli::asset_dir() + "/fmnist_drafter16.safetensors";
  if (!drafter.empty()) drafter_ = std::make_unique<Gpt>(*ctx_, drafter);
  // Relaxed acceptance (LANTERN, --accept lantern) from the panel: computed once, then cached.
  neighbours_ = std::make_unique<CodebookNeighbours>(*ctx_, *vq_);
  // Likewise the shipped low-resolution model (mulo) and draft heads (hawk, ssd, --init heads).
  std::string low_res = opt_.low_res, heads = opt_.heads;
  if (shipped && low_res.empty() && file_exists(cli::asset_dir() + "/fmnist_gpt8.safetensors"))
    low_res = cli::asset_dir() + "/fmnist_gpt8.safetensors";
  if (shipped && heads.empty() && file_exists(cli::asset_dir() + "/fmnist_gpt16_heads.safetensors"))
    heads = cli::asset_dir() + "/fmnist_gpt16_heads.safetensors";
  if (!low_res.empty()) {
    low_res_ = std::make_unique<Gpt>(*ctx_, low_res, gopt);
    // MuLo-SD's pixel path runs inside the strategy's steps: a tokenizer of its own, so the frame
    // decoder's buffers are never shared.
    strategy_vq_ = std::make_unique<VqModel>(*ctx_, vq, DType::F16, 1, grid_);
  }
  if (!heads.empty()) heads_ = std::make_unique<DraftHeads>(*ctx_, heads, *gpt_, 2 * kMaxQueries);
}

std::unique_ptr<FrameDecoder> App::make_decoder() {
  if (vq_) return std::make_unique<VqFrameDecoder>(*ctx_, *vq_, grid_);
  return std::make_unique<PaletteFrameDecoder>(grid_);
}

void App::install_lanes(std::vector<Lane> lanes, std::vector<LaneView> views) {
  // Canvases are kept when the number of lanes stays: their textures are reused.
  for (size_t i = 0; i < views.size(); ++i) {
    if (i < lanes_.size() && lanes_[i].canvas) {
      views[i].canvas = std::move(lanes_[i].canvas);
      views[i].canvas->clear();
    } else {
      views[i].canvas = std::make_unique<Canvas>(*ctx_, *canvas_renderer_);
    }
  }
  if (views.size() < lanes_.size()) {
    // Retired canvases may still be sampled by frames in flight.
    swapchain_->flush();
  }
  lanes_ = std::move(views);
  worker_->start(std::move(lanes));
  timeline_.step = 0;
  timeline_.position = 0;
  timeline_.follow = !trace_ && timeline_.pinned < 0;
  timeline_.playing = trace_ && timeline_.pinned < 0;
  ui_error_.clear();
}

void App::start_live(const std::vector<std::pair<std::string, MethodOptions>>& methods, int64_t class_id,
                     uint64_t seed, const SamplerSettings& sampler) {
  ModelSet models;
  models.ctx = ctx_.get();
  models.target = gpt_.get();
  models.drafter = drafter_.get();
  models.low_res = low_res_.get();
  models.neighbours = neighbours_.get();
  models.heads = heads_.get();
  models.vq = strategy_vq_.get();
  std::vector<Lane> lanes;
  std::vector<LaneView> views;
  for (const auto& [method, options] : methods) {
    StrategyInputs in;
    in.class_id = class_id;
    in.seed = seed;
    in.sampler = sampler;
    in.options = options;
    in.profile = true;  // device time per step for the stats table
    auto record = std::make_shared<RunRecord>(method, class_id, seed, grid_);
    lanes.push_back({std::make_unique<StrategySource>(method, models, in), record});
    LaneView v;
    v.record = record;
    v.label = label_of(method, options);
    v.options = options;
    views.push_back(std::move(v));
  }
  install_lanes(std::move(lanes), std::move(views));
}

void App::start_replay(int64_t image, int64_t compare) {
  std::vector<Lane> lanes;
  std::vector<LaneView> views;
  for (int64_t i : {image, compare}) {
    if (i < 0 || i >= static_cast<int64_t>(trace_->images.size())) continue;
    const Generation& g = trace_->images[static_cast<size_t>(i)];
    auto record = std::make_shared<RunRecord>(g.method, g.class_id, g.seed, grid_);
    lanes.push_back({std::make_unique<TraceSource>(g), record});
    LaneView v;
    v.record = record;
    v.label = label_of(g.method, trace_->config.options) + " [image " + std::to_string(i) + "]";
    v.options = trace_->config.options;
    views.push_back(std::move(v));
  }
  install_lanes(std::move(lanes), std::move(views));
}

void App::start_from_controls() {
  try {
    if (trace_) {
      start_replay(controls_.trace_image, controls_.trace_compare);
      return;
    }
    controls_.sampler.validate();
    std::vector<std::pair<std::string, MethodOptions>> m = {
        {methods_.at(static_cast<size_t>(controls_.method)), parse_method_options(controls_.options)}};
    if (controls_.compare >= 0)
      m.push_back({methods_.at(static_cast<size_t>(controls_.compare)), parse_method_options(controls_.compare_options)});
    start_live(m, controls_.class_id, static_cast<uint64_t>(controls_.seed), controls_.sampler);
  } catch (const std::exception& e) {
    ui_error_ = e.what();
  }
}

int64_t App::available_steps() const {
  size_t n = 0;
  for (const LaneView& l : lanes_) n = std::max(n, l.frames.size());
  return static_cast<int64_t>(n);
}

void App::update_timeline(double dt) {
  for (LaneView& l : lanes_) l.frames = l.record->frames();
  const int64_t n = available_steps();
  if (n == 0) {
    timeline_.step = 0;
    return;
  }
  if (timeline_.pinned >= 0) {
    timeline_.step = std::min(timeline_.pinned, n - 1);
    timeline_.playing = false;
  } else if (timeline_.playing) {
    timeline_.position = std::min(timeline_.position + dt * opt_.replay_speed, static_cast<double>(n - 1));
    timeline_.step = static_cast<int64_t>(timeline_.position);
    const bool ended = std::all_of(lanes_.begin(), lanes_.end(), [](const LaneView& l) { return l.record->ended(); });
    if (ended && timeline_.step >= n - 1) timeline_.playing = false;
  } else if (timeline_.follow) {
    timeline_.step = n - 1;
  }
  timeline_.step = std::clamp<int64_t>(timeline_.step, 0, n - 1);
  if (!timeline_.playing) timeline_.position = static_cast<double>(timeline_.step);
}

void App::update_canvases() {
  for (LaneView& l : lanes_) {
    if (l.frames.empty()) continue;
    const size_t shown = std::min(static_cast<size_t>(timeline_.step), l.frames.size() - 1);
    if (shown == l.shown_step && l.shown_record == l.record.get()) continue;
    std::vector<const StepEvent*> events;
    for (size_t i = 0; i <= shown; ++i) events.push_back(&l.frames[i]->event);
    const CellOverlay cells = build_cell_overlay(events, grid_);
    l.canvas->set(l.frames[shown]->image, cells);
    l.islands = cells.islands;
    l.shown_step = shown;
    l.shown_record = l.record.get();
  }
}

bool App::settled() const {
  if (lanes_.empty() || timeline_.playing) return false;
  // A pinned step is there once every lane has reached it, unless the whole run is to be saved.
  const bool whole_run = timeline_.pinned < 0 || !opt_.save_trace.empty();
  for (const LaneView& l : lanes_) {
    const bool reached = !whole_run && static_cast<int64_t>(l.frames.size()) > timeline_.pinned;
    if (!reached && (!l.record->ended() || l.frames.size() != l.record->size())) return false;
    if (l.frames.empty() || l.shown_record != l.record.get()) return false;
  }
  const int64_t n = available_steps();
  const int64_t target = timeline_.pinned >= 0 ? std::min(timeline_.pinned, n - 1) : n - 1;
  return timeline_.step == target;
}

void App::frame() {
  const auto t0 = Clock::now();
  const double dt = std::chrono::duration<double>(t0 - last_frame_).count();
  if (frames_ > 0) (decoding_ ? interval_decoding_ : interval_idle_).add(dt * 1000.0);
  last_frame_ = t0;
  decoding_ = std::any_of(lanes_.begin(), lanes_.end(), [](const LaneView& l) { return !l.record->ended(); });

  // Runs asked for by the panel start here, between frames, never while a draw list refers to
  // the canvases they may replace.
  if (start_requested_) {
    start_requested_ = false;
    start_from_controls();
  }
  update_timeline(dt);
  kiosk_tick();
  update_canvases();
  if (writer_) writer_->check();

  gui_->new_frame();
  build_ui();
  gui_->end_frame();

  bool screenshot = false;
  if (!opt_.screenshot.empty() && !done_) {
    for (const LaneView& l : lanes_)
      if (l.record->state() == RunState::Failed)
        throw Error("run " + l.label + " failed: " + l.record->error());
    screenshot = frames_ + 1 >= static_cast<uint64_t>(opt_.frames) && settled();
  }
  const auto target = swapchain_->begin_frame(window_->framebuffer_size());
  if (!target) return;
  for (LaneView& l : lanes_) l.canvas->record_uploads(target->cmd, target->slot, target->number, Swapchain::kFramesInFlight);
  swapchain_->begin_render_pass(*target, {0.06f, 0.06f, 0.07f, 1.0f});
  canvas_renderer_->set_target(target->cmd, target->extent);
  gui_->record(target->cmd);
  swapchain_->end_render_pass(*target, screenshot || writer_);
  swapchain_->submit_and_present(*target);
  ++frames_;
  if (screenshot) {
    screenshot_frame_ = target->number;
    done_ = true;
    nlohmann::json lanes = nlohmann::json::array();
    for (const LaneView& l : lanes_)
      lanes.push_back({{"method", l.record->method()},
                       {"class", l.record->class_id()},
                       {"seed", l.record->seed()},
                       {"step", l.shown_step},
                       {"steps", l.frames.size()},
                       {"grid", grid_},
                       {"x", l.p0.x},
                       {"y", l.p0.y},
                       {"w", l.p1.x - l.p0.x},
                       {"h", l.p1.y - l.p0.y}});
    layout_json_ = nlohmann::json{{"width", target->extent.width}, {"height", target->extent.height}, {"lanes", lanes}}
                       .dump(2);
  }
  work_.add(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
}

int App::run() {
  const double budget = opt_.fps > 0 ? 1.0 / opt_.fps : 0.0;
  while (!window_->should_close() && !done_ && !stop_requested()) {
    const auto t0 = Clock::now();
    glfwPollEvents();
    frame();
    if (!opt_.screenshot.empty() && !done_ &&
        std::chrono::duration<double>(Clock::now() - started_).count() > opt_.timeout_s)
      throw Error("--screenshot: the runs did not finish within " + std::to_string(static_cast<int>(opt_.timeout_s)) +
                  " s (raise --timeout)");
    const double spent = std::chrono::duration<double>(Clock::now() - t0).count();
    if (spent < budget) std::this_thread::sleep_for(std::chrono::duration<double>(budget - spent));
  }
  swapchain_->flush();
  if (writer_) {
    writer_->drain();
    writer_->check();
  }
  save_trace();
  std::fprintf(stderr, "vkspec-viewer: %llu frames on %s at %ux%u", static_cast<unsigned long long>(frames_),
               ctx_->caps().name.c_str(), swapchain_->extent().width, swapchain_->extent().height);
  for (const auto& [name, t] : {std::pair<const char*, const FrameTimes*>{"while decoding", &interval_decoding_},
                                {"idle", &interval_idle_}})
    if (t->count)
      std::fprintf(stderr, "; %s %llu frames, interval median %.1f ms, p95 %.1f ms", name,
                   static_cast<unsigned long long>(t->count), t->percentile(0.5), t->percentile(0.95));
  if (work_.count)
    std::fprintf(stderr, "; frame work median %.1f ms, p95 %.1f ms", work_.percentile(0.5), work_.percentile(0.95));
  std::fprintf(stderr, "\n");
  if (!opt_.screenshot.empty()) {
    if (!done_) throw Error("the viewer was closed before the screenshot " + opt_.screenshot + " was taken");
    std::printf("wrote %s\n", opt_.screenshot.c_str());
  }
  // With VKSPEC_VALIDATION=1 (the tests), any validation message fails the run.
  const std::vector<std::string> messages = instance_->validation_log().take();
  for (size_t i = 0; i < messages.size() && i < 20; ++i) std::fprintf(stderr, "%s\n", messages[i].c_str());
  if (!messages.empty()) {
    std::fprintf(stderr, "vkspec-viewer: %zu validation message(s)\n", messages.size());
    return 3;
  }
  return 0;
}

}  // namespace vkspec::viewer
