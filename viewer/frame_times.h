#pragma once
// How smooth the viewer ran: frame intervals while decoding and while idle, and each frame's own
// work, in 0.5 ms buckets (constant memory for kiosks that run for days); printed on exit.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec::viewer {

class FrameTimes {
 public:
  // decoding: a run is in progress as this frame begins. Returns seconds since the last frame.
  double begin_frame(bool decoding);
  // The frame was presented.
  void end_frame();
  uint64_t presented() const { return work_.count; }
  // "; while decoding N frames, interval median ... ms, p95 ... ms; idle ...; frame work ...".
  std::string summary() const;

 private:
  struct Histogram {
    std::vector<uint64_t> buckets = std::vector<uint64_t>(2001, 0);
    uint64_t count = 0;
    void add(double ms);
    double percentile(double q) const;
  };
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_begin_ = Clock::now();
  bool decoding_ = false;  // as the last frame began
  Histogram interval_decoding_, interval_idle_, work_;
};

}  // namespace vkspec::viewer
