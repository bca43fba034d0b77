#include "viewer/trace_export.h"

#include "common/error.h"

namespace vkspec::viewer {

void save_trace(const std::string& path, TraceConfig config, const std::vector<LaneView>& lanes) {
  if (lanes.empty()) return;
  config.options = lanes.front().options;
  std::vector<Generation> gens;
  for (const LaneView& l : lanes) {
    const auto frames = l.record->frames();
    if (l.record->state() != RunState::Finished || frames.empty()) continue;
    Generation g;
    g.method = l.record->method();
    g.class_id = l.record->class_id();
    // What the trace reader needs of an image without a class: its condition, and its prompt.
    g.condition = l.record->condition().description;
    g.prompt = l.record->prompt();
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
  if (gens.empty()) throw Error("--save-trace " + path + ": no run finished");
  write_trace(path, config, gens);
}

}  // namespace vkspec::viewer
