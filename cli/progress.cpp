#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>

namespace vkspec::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// "1:05:09", "4:07", "0:03".
std::string clock_text(double seconds) {
  const long long s = static_cast<long long>(seconds + 0.5);
  char b[32];
  if (s >= 3600)
    std::snprintf(b, sizeof(b), "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(b, sizeof(b), "%lld:%02lld", s / 60, s % 60);
  return b;
}

}  // namespace

Progress::Progress(std::string label, int64_t total) : Progress(std::move(label), total, isatty(STDERR_FILENO)) {}

Progress::Progress(std::string label, int64_t total, bool terminal)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), terminal_(terminal), start_(Clock::now()) {
  if (terminal_) draw();
}

std::string Progress::rate_and_eta() const {
  const double elapsed = seconds_between(start_, Clock::now());
  if (done_ == 0 || elapsed <= 0) return "";
  const double rate = static_cast<double>(done_) / elapsed;
  char b[96];
  std::snprintf(b, sizeof(b), ", %.3g images/s, %s %s", rate, done_ < total_ ? "ETA" : "took",
                clock_text(done_ < total_ ? static_cast<double>(total_ - done_) / rate : elapsed).c_str());
  return b;
}

void Progress::image_done() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  note_.clear();
  if (terminal_) {
    draw();
    return;
  }
  // A line whenever the count passes another tenth of the total.
  const int tenths = static_cast<int>(done_ * 10 / total_);
  if (tenths == tenths_shown_) return;
  tenths_shown_ = tenths;
  std::fprintf(stderr, "%s: %lld/%lld images%s\n", label_.c_str(), static_cast<long long>(done_),
               static_cast<long long>(total_), rate_and_eta().c_str());
}

void Progress::note(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!terminal_) return;
  note_ = text;
  // Steps can be far faster than a terminal is worth redrawing.
  if (seconds_between(last_draw_, Clock::now()) >= 0.1) draw();
}

void Progress::draw() {
  constexpr int kBar = 24;
  const int filled = static_cast<int>(done_ * kBar / total_);
  const std::string bar =
      std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(kBar - filled), '.');
  // \033[K clears what a longer earlier line left behind.
  std::fprintf(stderr, "\r%s [%s] %lld/%lld images%s%s%s\033[K", label_.c_str(), bar.c_str(),
               static_cast<long long>(done_), static_cast<long long>(total_), rate_and_eta().c_str(),
               note_.empty() ? "" : ", ", note_.c_str());
  std::fflush(stderr);
  last_draw_ = Clock::now();
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (terminal_) std::fprintf(stderr, "\n");
}

}  // namespace vkspec::cli
