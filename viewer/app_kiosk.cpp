// Kiosk mode: cycles methods (a speculative one racing ar) and classes on its own, holds each
// finished image for a moment, and moves on after any failure.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "engine/vk/memory_report.h"
#include "viewer/app.h"

namespace vkspec::viewer {

void App::start_kiosk_run() {
  // Methods that failed before their first step (a model they need is missing) are left out.
  int64_t i = kiosk_index_++;
  for (size_t tries = 0; tries < methods_.size(); ++tries) {
    const std::string& m = methods_[static_cast<size_t>(i % static_cast<int64_t>(methods_.size()))];
    if (!kiosk_unavailable_.count(m)) break;
    i = kiosk_index_++;
  }
  const std::string& method = methods_[static_cast<size_t>(i % static_cast<int64_t>(methods_.size()))];
  std::vector<std::pair<std::string, MethodOptions>> m = {{method, {}}};
  // A speculative method races plain AR on the same class and seed.
  const std::string& ar = reference_method_name();
  if (method != ar && std::find(methods_.begin(), methods_.end(), ar) != methods_.end()) m.push_back({ar, {}});
  controls_.class_id = static_cast<int>(i % std::max<int64_t>(1, num_classes_));
  controls_.seed = static_cast<long long>(opt_.seed + static_cast<uint64_t>(i));
  start_live(m, controls_.class_id, static_cast<uint64_t>(controls_.seed), controls_.sampler);
  kiosk_next_.reset();
  // One line per run: what a long unattended session is checked with (memory must stay flat).
  std::fprintf(stderr, "vkspec-viewer: kiosk run %lld: %s%s, class %d, seed %lld; %s\n", static_cast<long long>(i),
               method.c_str(), m.size() > 1 ? " vs ar" : "", controls_.class_id, controls_.seed,
               memory_report(*ctx_).str().c_str());
}

void App::kiosk_tick() {
  if (!opt_.kiosk) return;
  for (const LaneView& l : lanes_)
    if (l.record->device_lost()) throw RestartRequired("the device was lost: " + l.record->error());
  const bool ended = std::all_of(lanes_.begin(), lanes_.end(), [](const LaneView& l) { return l.record->ended(); });
  if (!ended) return;
  const auto now = Clock::now();
  if (!kiosk_next_) {
    const bool failed = std::any_of(lanes_.begin(), lanes_.end(),
                                    [](const LaneView& l) { return l.record->state() == RunState::Failed; });
    for (const LaneView& l : lanes_)
      if (l.record->state() == RunState::Failed) {
        std::cerr << "vkspec-viewer: kiosk: " << l.label << " failed: " << l.record->error() << "\n";
        if (l.frames.empty()) kiosk_unavailable_.insert(l.record->method());
      }
    const double hold = failed ? std::min(opt_.kiosk_hold_s, 3.0) : opt_.kiosk_hold_s;
    kiosk_next_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(hold));
  }
  if (now >= *kiosk_next_) start_kiosk_run();
}
}  // namespace vkspec::viewer
