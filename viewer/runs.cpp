#include "viewer/runs.h"

#include <algorithm>
#include <mutex>

#include "common/error.h"
#include "frontend/method_options_text.h"

namespace vkspec::viewer {
namespace {

std::string label_of(const std::string& method, const MethodOptions& o) {
  return o.empty() ? method : method + " (" + frontend::format_method_options(o) + ")";
}

}  // namespace

Runs::Runs(Context& ctx, Display& display, std::unique_ptr<FrameDecoder> decoder, int64_t grid)
    : ctx_(ctx), display_(display), grid_(grid), worker_(std::make_unique<DecodeWorker>(std::move(decoder))) {}

Runs::~Runs() {
  // The decode thread first: it is the other user of the queue.
  worker_.reset();
  std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
  vkQueueWaitIdle(ctx_.queue());
}

void Runs::install(std::vector<Lane> lanes, std::vector<LaneView> views, bool replay) {
  // Canvases are kept when the number of lanes stays: their textures are reused.
  for (size_t i = 0; i < views.size(); ++i) {
    if (i < lanes_.size() && lanes_[i].canvas) {
      views[i].canvas = std::move(lanes_[i].canvas);
      views[i].canvas->clear();
    } else {
      views[i].canvas = std::make_unique<Canvas>(ctx_, display_.canvas_renderer());
    }
  }
  if (views.size() < lanes_.size()) {
    // Retired canvases may still be sampled by frames in flight.
    display_.swapchain().flush();
  }
  lanes_ = std::move(views);
  worker_->start(std::move(lanes));
  timeline_.restart(replay);
}

void Runs::start_live(const std::vector<frontend::MethodRun>& runs, const ModelSet& models,
                      std::shared_ptr<const Condition> condition, uint64_t seed, const SamplerSettings& sampler) {
  if (!condition) throw Error("the live runs need a condition (a class or a prompt)");
  const RunCondition shown = RunCondition::of(*condition);
  std::vector<Lane> lanes;
  std::vector<LaneView> views;
  for (const frontend::MethodRun& run : runs) {
    StrategyInputs in;
    in.condition = condition;
    in.seed = seed;
    in.sampler = sampler;
    in.options = run.options;
    in.profile = true;  // device time per step for the stats table
    auto record = std::make_shared<RunRecord>(run.method, shown, seed, grid_);
    lanes.push_back({std::make_unique<StrategySource>(run.method, models, in), record});
    LaneView v;
    v.record = record;
    v.label = label_of(run.method, run.options);
    v.options = run.options;
    views.push_back(std::move(v));
  }
  install(std::move(lanes), std::move(views), false);
}

void Runs::start_replay(const Trace& trace, const std::vector<int64_t>& images) {
  std::vector<Lane> lanes;
  std::vector<LaneView> views;
  for (int64_t i : images) {
    if (i < 0 || i >= static_cast<int64_t>(trace.images.size())) continue;
    const Generation& g = trace.images[static_cast<size_t>(i)];
    auto record = std::make_shared<RunRecord>(g.method, RunCondition::of(g), g.seed, grid_);
    lanes.push_back({std::make_unique<TraceSource>(g), record});
    LaneView v;
    v.record = record;
    v.label = label_of(g.method, trace.config.options) + " [image " + std::to_string(i) + "]";
    v.options = trace.config.options;
    views.push_back(std::move(v));
  }
  install(std::move(lanes), std::move(views), true);
}

int64_t Runs::available_steps() const {
  size_t n = 0;
  for (const LaneView& l : lanes_) n = std::max(n, l.frames.size());
  return static_cast<int64_t>(n);
}

bool Runs::ended() const {
  return std::all_of(lanes_.begin(), lanes_.end(), [](const LaneView& l) { return l.record->ended(); });
}

void Runs::update(double dt, double replay_speed) {
  for (LaneView& l : lanes_) l.frames = l.record->frames();
  timeline_.advance(available_steps(), ended(), dt, replay_speed);
  update_canvases();
}

void Runs::update_canvases() {
  for (LaneView& l : lanes_) {
    if (l.frames.empty()) continue;
    const size_t shown = std::min(static_cast<size_t>(timeline_.step), l.frames.size() - 1);
    if (shown == l.shown_step && l.shown_record == l.record.get()) continue;
    std::vector<const StepEvent*> events;
    for (size_t i = 0; i <= shown; ++i) events.push_back(&l.frames[i]->event);
    l.cells = build_cell_overlay(events, grid_);
    l.canvas->set(l.frames[shown]->image, l.cells);
    l.shown_step = shown;
    l.shown_record = l.record.get();
  }
}

bool Runs::settled(bool whole_runs) const {
  if (lanes_.empty() || timeline_.playing) return false;
  const bool whole_run = timeline_.pinned < 0 || whole_runs;
  for (const LaneView& l : lanes_) {
    const bool reached = !whole_run && static_cast<int64_t>(l.frames.size()) > timeline_.pinned;
    if (!reached && (!l.record->ended() || l.frames.size() != l.record->size())) return false;
    if (l.frames.empty() || l.shown_record != l.record.get()) return false;
  }
  const int64_t n = available_steps();
  const int64_t target = timeline_.pinned >= 0 ? std::min(timeline_.pinned, n - 1) : n - 1;
  return timeline_.step == target;
}

}  // namespace vkspec::viewer
