#pragma once
// Writes captured frames as PNG files on a background thread (PNG compression of a 1280x720 frame
// takes longer than rendering it). At most `depth` frames wait; beyond that add() blocks, so no
// frame is dropped and memory stays bounded.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "engine/image/image.h"

namespace vkspec::viewer {

class FrameWriter {
 public:
  explicit FrameWriter(size_t depth = 4);
  ~FrameWriter();  // writes what is queued, then stops
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  void add(std::string path, Image image);
  // Throws the first write error, if any (and forgets it).
  void check();
  void drain();

 private:
  void loop();
  size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::string, Image>> queue_;
  bool quit_ = false, busy_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace vkspec::viewer
