#include "viewer/capture.h"

#include <cstdio>
#include <fstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

namespace vkspec::viewer {

Capture::Capture(const ViewerOptions& options) : opt_(options) {
  if (opt_.record_dir.empty()) return;
  mkdir(opt_.record_dir.c_str(), 0755);
  struct stat st;
  if (stat(opt_.record_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("--record " + opt_.record_dir + ": not a directory and cannot be created");
  writer_ = std::make_unique<FrameWriter>();
}

bool Capture::screenshot_due(uint64_t presented, const Runs& runs) const {
  if (opt_.screenshot.empty() || done_) return false;
  for (const LaneView& l : runs.lanes())
    if (l.record->state() == RunState::Failed) throw Error("run " + l.label + " failed: " + l.record->error());
  return presented + 1 >= static_cast<uint64_t>(opt_.frames) && runs.settled(!opt_.save_trace.empty());
}

void Capture::took_screenshot(const FrameTarget& frame, const Runs& runs, int64_t grid) {
  screenshot_frame_ = frame.number;
  done_ = true;
  nlohmann::json lanes = nlohmann::json::array();
  for (const LaneView& l : runs.lanes()) {
    nlohmann::json lane = {{"method", l.record->method()},
                           {"class", l.record->class_id()},
                           {"seed", l.record->seed()},
                           {"step", l.shown_step},
                           {"steps", l.frames.size()},
                           {"grid", grid},
                           {"x", l.p0.x},
                           {"y", l.p0.y},
                           {"w", l.p1.x - l.p0.x},
                           {"h", l.p1.y - l.p0.y}};
    // A prompt run (class -1) says what it drew; other non-class runs how they were conditioned.
    if (!l.record->prompt().empty()) lane["prompt"] = l.record->prompt();
    if (l.record->class_id() < 0) lane["condition"] = l.record->condition().description;
    lanes.push_back(std::move(lane));
  }
  layout_json_ =
      nlohmann::json{{"width", frame.extent.width}, {"height", frame.extent.height}, {"lanes", lanes}}.dump(2);
}

void Capture::on_frame(uint64_t frame_number, Image image) {
  if (writer_) {
    char name[32];
    std::snprintf(name, sizeof(name), "/frame_%06llu.png", static_cast<unsigned long long>(frame_number));
    writer_->add(opt_.record_dir + name, image);
  }
  if (frame_number != screenshot_frame_ || opt_.screenshot.empty()) return;
  image.write_png(opt_.screenshot);
  if (opt_.layout_file.empty()) return;
  std::ofstream f(opt_.layout_file);
  f << layout_json_ << "\n";
  if (!f) throw Error("cannot write layout file " + opt_.layout_file);
}

void Capture::check() {
  if (writer_) writer_->check();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (!opt_.screenshot.empty() && !done_ && waited > opt_.timeout_s)
    throw Error("--screenshot: the runs did not finish within " + std::to_string(static_cast<int>(opt_.timeout_s)) +
                " s (raise --timeout)");
}

void Capture::finish_recording() {
  if (!writer_) return;
  writer_->drain();
  writer_->check();
}

void Capture::confirm_screenshot() const {
  if (opt_.screenshot.empty()) return;
  if (!done_) throw Error("the viewer was closed before the screenshot " + opt_.screenshot + " was taken");
  std::printf("wrote %s\n", opt_.screenshot.c_str());
}

}  // namespace vkspec::viewer
