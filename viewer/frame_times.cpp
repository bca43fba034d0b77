#include "viewer/frame_times.h"

#include <algorithm>
#include <cstdio>

namespace vkspec::viewer {

void FrameTimes::Histogram::add(double ms) {
  ++buckets[std::min<size_t>(buckets.size() - 1, static_cast<size_t>(std::max(0.0, ms) * 2.0))];
  ++count;
}

double FrameTimes::Histogram::percentile(double q) const {
  const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count));
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets.size(); ++i)
    if ((seen += buckets[i]) > rank) return (static_cast<double>(i) + 0.5) / 2.0;
  return static_cast<double>(buckets.size()) / 2.0;
}

double FrameTimes::begin_frame(bool decoding) {
  const auto now = Clock::now();
  const double dt = std::chrono::duration<double>(now - last_begin_).count();
  if (presented() > 0) (decoding_ ? interval_decoding_ : interval_idle_).add(dt * 1000.0);
  last_begin_ = now;
  decoding_ = decoding;
  return dt;
}

void FrameTimes::end_frame() {
  work_.add(std::chrono::duration<double, std::milli>(Clock::now() - last_begin_).count());
}

std::string FrameTimes::summary() const {
  std::string s;
  char buf[160];
  for (const auto& [name, t] :
       {std::pair<const char*, const Histogram*>{"while decoding", &interval_decoding_}, {"idle", &interval_idle_}})
    if (t->count) {
      std::snprintf(buf, sizeof(buf), "; %s %llu frames, interval median %.1f ms, p95 %.1f ms", name,
                    static_cast<unsigned long long>(t->count), t->percentile(0.5), t->percentile(0.95));
      s += buf;
    }
  if (work_.count) {
    std::snprintf(buf, sizeof(buf), "; frame work median %.1f ms, p95 %.1f ms", work_.percentile(0.5),
                  work_.percentile(0.95));
    s += buf;
  }
  return s;
}

}  // namespace vkspec::viewer
