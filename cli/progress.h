#pragma once
// Images done out of a known total, on stderr. On a terminal a bar redrawn in place with images/s
// and the time left; otherwise (a log, a test) one line per tenth of the total, so that a
// 50000-image run leaves ten lines and a two-image test two. Thread-safe: the workers of
// `--devices` report their images and steps to one bar.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace vkspec::cli {

class Progress {
 public:
  // terminal: whether stderr is one (isatty), unless told.
  Progress(std::string label, int64_t total);
  Progress(std::string label, int64_t total, bool terminal);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { finish(); }

  void image_done();
  // What the current image is doing ("120/256 tokens"), shown on a terminal only.
  void note(const std::string& text);
  // Ends the bar's line; later calls do nothing.
  void finish();

 private:
  void draw();
  std::string rate_and_eta() const;

  std::mutex mutex_;  // held by each public call
  std::string label_;
  int64_t total_, done_ = 0;
  bool terminal_, finished_ = false;
  int tenths_shown_ = 0;
  std::string note_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace vkspec::cli
