#include "viewer/kiosk.h"

#include <algorithm>
#include <iostream>

namespace vkspec::viewer {

namespace {

// How long a visitor's image stays at least: time to look at what they asked for.
constexpr double kVisitorHoldS = 15.0;

}  // namespace

Kiosk::Kiosk(int64_t& counter, std::vector<std::string> methods, uint64_t first_seed, double hold_s,
             std::vector<std::string> prompts)
    : counter_(counter),
      methods_(std::move(methods)),
      first_seed_(first_seed),
      hold_s_(hold_s),
      prompts_(std::move(prompts)) {}

KioskRun Kiosk::start_next() {
  const auto method_of = [&](int64_t i) -> const std::string& {
    return methods_[static_cast<size_t>(i % static_cast<int64_t>(methods_.size()))];
  };
  int64_t i = counter_++;
  for (size_t tries = 0; tries < methods_.size(); ++tries) {
    if (!unavailable_.count(method_of(i))) break;
    i = counter_++;
  }
  KioskRun k;
  k.number = i;
  k.runs = {{method_of(i), {}}};
  // A speculative method races plain AR on the same condition and seed.
  const std::string& ar = reference_method_name();
  if (method_of(i) != ar && std::find(methods_.begin(), methods_.end(), ar) != methods_.end())
    k.runs.push_back({ar, {}});
  k.seed = first_seed_ + static_cast<uint64_t>(i);
  next_.reset();
  return k;
}

KioskRun Kiosk::next(int64_t num_classes) {
  KioskRun k = start_next();
  if (prompts_.empty()) {
    k.class_id = k.number % std::max<int64_t>(1, num_classes);
  } else {
    k.class_id = -1;
    k.prompt = prompts_[static_cast<size_t>(k.number % static_cast<int64_t>(prompts_.size()))];
  }
  visitor_ = false;
  return k;
}

KioskRun Kiosk::visit(const std::string& prompt) {
  KioskRun k = start_next();
  k.class_id = -1;
  k.prompt = prompt;
  k.visitor = visitor_ = true;
  return k;
}

bool Kiosk::due(const std::vector<LaneView>& lanes) {
  for (const LaneView& l : lanes)
    if (l.record->device_lost()) throw RestartRequired("the device was lost: " + l.record->error());
  if (!std::all_of(lanes.begin(), lanes.end(), [](const LaneView& l) { return l.record->ended(); })) return false;
  const auto now = Clock::now();
  if (!next_) {
    bool failed = false;
    for (const LaneView& l : lanes)
      if (l.record->state() == RunState::Failed) {
        failed = true;
        std::cerr << "vkspec-viewer: kiosk: " << l.label << " failed: " << l.record->error() << "\n";
        if (l.frames.empty()) unavailable_.insert(l.record->method());
      }
    const double hold = failed ? std::min(hold_s_, 3.0) : visitor_ ? std::max(hold_s_, kVisitorHoldS) : hold_s_;
    next_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(hold));
  }
  return now >= *next_;
}

}  // namespace vkspec::viewer
