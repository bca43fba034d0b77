#include "viewer/app.h"

#include <csignal>
#include <cstdio>
#include <thread>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "engine/vk/memory_report.h"
#include "viewer/kiosk_prompts.h"
#include "viewer/trace_export.h"

namespace vkspec::viewer {
namespace {

volatile std::sig_atomic_t g_stop = 0;

}  // namespace

void request_stop(int) { g_stop = 1; }
bool stop_requested() { return g_stop != 0; }

App::App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter)
    : App(options, glfw, kiosk_counter, read_replay(options)) {}

App::App(const ViewerOptions& options, GlfwLibrary& glfw, int64_t& kiosk_counter, std::optional<Trace> replay)
    : opt_(options),
      session_(opt_, glfw),
      models_(session_.context(), frontend::ModelCatalog(opt_.models), std::move(replay)),
      display_(session_),
      runs_(session_.context(), display_, models_.make_frame_decoder(), models_.grid()),
      capture_(opt_),
      ui_(opt_, session_, models_, runs_, strategy_names()) {
  display_.swapchain().on_capture = [this](uint64_t n, Image image) { capture_.on_frame(n, std::move(image)); };
  runs_.timeline().pinned = opt_.step;
  if (opt_.kiosk) {
    kiosk_.emplace(kiosk_counter, ui_.methods(), opt_.seed, opt_.kiosk_hold_s, checked_kiosk_prompts());
    start_kiosk_run();
  } else {
    start_from_controls();
  }
  if (!ui_.error().empty()) throw Error(ui_.error());
}

std::vector<std::string> App::checked_kiosk_prompts() const {
  if (!models_.takes_prompt()) {
    if (!opt_.kiosk_prompts.empty())
      throw Error("--kiosk-prompts: " + models_.target_name() + " takes class labels, not prompts");
    return {};
  }
  std::vector<std::string> prompts = kiosk_prompts(opt_.kiosk_prompts);
  // Each one made once now: a prompt the model cannot take is a configuration error to report at
  // start, not a run that fails unattended later.
  for (size_t i = 0; i < prompts.size(); ++i) {
    try {
      models_.prompt_condition(prompts[i]);
    } catch (const Error& e) {
      const std::string where = opt_.kiosk_prompts.empty() ? "example prompt" : "--kiosk-prompts " + opt_.kiosk_prompts;
      throw Error(where + " " + std::to_string(i + 1) + " (\"" + shortened(prompts[i], 60) + "\"): " + e.what());
    }
  }
  return prompts;
}

void App::start_from_controls() {
  const Controls& c = ui_.controls();
  try {
    if (const Trace* trace = models_.replay())
      runs_.start_replay(*trace, {c.trace_image, c.trace_compare});
    else
      runs_.start_live(runs_of(c, ui_.methods()), models_.strategy_models(), condition_of(c, models_),
                       static_cast<uint64_t>(c.seed), c.sampler);
    ui_.set_error("");
  } catch (const std::exception& e) {
    ui_.set_error(e.what());
  }
}

void App::start_kiosk_run() {
  const KioskRun k = kiosk_->next(models_.num_classes());
  show_kiosk_run(k, k.prompt.empty() ? std::make_shared<ClassLabel>(k.class_id) : models_.prompt_condition(k.prompt));
}

void App::start_visitor_run() {
  const std::string prompt = ui_.controls().prompt;
  std::shared_ptr<const Condition> condition;
  try {
    condition = models_.prompt_condition(prompt);
  } catch (const Error& e) {
    ui_.set_error(e.what());  // shown under the box; the runs on screen go on
    return;
  }
  show_kiosk_run(kiosk_->visit(prompt), std::move(condition));
  ui_.controls().prompt[0] = '\0';  // ready for the next visitor
}

void App::show_kiosk_run(const KioskRun& k, std::shared_ptr<const Condition> condition) {
  Controls& c = ui_.controls();
  c.class_id = static_cast<int>(std::max<int64_t>(0, k.class_id));
  c.seed = static_cast<long long>(k.seed);
  runs_.start_live(k.runs, models_.strategy_models(), condition, k.seed, c.sampler);
  ui_.set_error("");
  // One line per run: what a long unattended session is checked with (memory must stay flat).
  std::fprintf(stderr, "vkspec-viewer: kiosk run %lld: %s%s, %s%s, seed %llu; %s\n", static_cast<long long>(k.number),
               k.runs.front().method.c_str(), k.runs.size() > 1 ? " vs ar" : "",
               RunCondition::of(*condition).text().c_str(), k.visitor ? " (a visitor's)" : "",
               static_cast<unsigned long long>(k.seed), memory_report(session_.context()).str().c_str());
}

void App::frame() {
  const double dt = frame_times_.begin_frame(!runs_.ended());
  if (ui_.take_start_request()) kiosk_ ? start_visitor_run() : start_from_controls();
  runs_.update(dt, opt_.replay_speed);
  if (kiosk_ && kiosk_->due(runs_.lanes())) start_kiosk_run();

  display_.begin_ui();
  ui_.build();
  display_.end_ui();

  const bool screenshot = capture_.screenshot_due(frame_times_.presented(), runs_);
  const auto target = display_.present(runs_.lanes(), capture_.copy_back(screenshot));
  if (!target) return;
  frame_times_.end_frame();
  if (screenshot) capture_.took_screenshot(*target, runs_, models_.grid());
}

int App::run() {
  const double budget = opt_.fps > 0 ? 1.0 / opt_.fps : 0.0;
  Window& window = session_.window();
  while (!window.should_close() && !capture_.done() && !stop_requested()) {
    const auto t0 = std::chrono::steady_clock::now();
    glfwPollEvents();
    frame();
    capture_.check();
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (spent < budget) std::this_thread::sleep_for(std::chrono::duration<double>(budget - spent));
  }
  display_.swapchain().flush();
  capture_.finish_recording();
  if (!opt_.save_trace.empty())
    save_trace(opt_.save_trace, models_.trace_config(ui_.controls().sampler), runs_.lanes());
  const VkExtent2D extent = display_.swapchain().extent();
  std::fprintf(stderr, "vkspec-viewer: %llu frames on %s at %ux%u%s\n",
               static_cast<unsigned long long>(frame_times_.presented()), session_.context().caps().name.c_str(),
               extent.width, extent.height, frame_times_.summary().c_str());
  capture_.confirm_screenshot();
  // With VKSPEC_VALIDATION=1 (the tests), any validation message fails the run.
  const std::vector<std::string> messages = session_.instance().validation_log().take();
  for (size_t i = 0; i < messages.size() && i < 20; ++i) std::fprintf(stderr, "%s\n", messages[i].c_str());
  if (!messages.empty()) {
    std::fprintf(stderr, "vkspec-viewer: %zu validation message(s)\n", messages.size());
    return 3;
  }
  return 0;
}

}  // namespace vkspec::viewer
