// What the viewer writes: recorded frames, the screenshot with its layout, the trace of the runs.
#include <cstdio>
#include <fstream>

#include "decoding/trace.h"
#include "viewer/app.h"

namespace vkspec::viewer {

void App::on_capture(uint64_t frame_number, Image image) {
  if (writer_) {
    char name[32];
    std::snprintf(name, sizeof(name), "/frame_%06llu.png", static_cast<unsigned long long>(frame_number));
    writer_->add(opt_.record_dir + name, image);
  }
  if (frame_number == screenshot_frame_ && !opt_.screenshot.empty()) {
    image.write_png(opt_.screenshot);
    write_layout();
  }
}

void App::write_layout() const {
  if (opt_.layout_file.empty()) return;
  std::ofstream f(opt_.layout_file);
  f << layout_json_ << "\n";
  if (!f) throw Error("cannot write layout file " + opt_.layout_file);
}

void App::save_trace() const {
  if (opt_.save_trace.empty() || lanes_.empty()) return;
  TraceConfig tc;
  tc.model = trace_ ? trace_->config.model : models_.target->path();
  tc.grid_size = grid_;
  tc.vocab_size = trace_ ? trace_->config.vocab_size : models_.target->config().vocab_size;
  tc.sampler = trace_ ? trace_->config.sampler : controls_.sampler;
  tc.options = lanes_.front().options;
  std::vector<Generation> gens;
  for (const LaneView& l : lanes_) {
    const auto frames = l.record->frames();
    if (l.record->state() != RunState::Finished || frames.empty()) continue;
    Generation g;
    g.method = l.record->method();
    g.class_id = l.record->class_id();
    g.seed = l.record->seed();
    g.tokens = frames.back()->event.grid;
    for (const auto& f : frames) {
      StepEvent e = f->event;
      e.grid.clear();
      g.wall_ms += e.wall_ms;
      g.device_ms += e.device_ms;
      g.events.push_back(std::move(e));
    }
    g.nfe = frames.back()->event.nfe;
    g.draft_forwards = frames.back()->event.draft_forwards;
    gens.push_back(std::move(g));
  }
  if (gens.empty()) throw Error("--save-trace " + opt_.save_trace + ": no run finished");
  write_trace(opt_.save_trace, tc, gens);
}
}  // namespace vkspec::viewer
