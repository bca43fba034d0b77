#include "viewer/frame_writer.h"

#include "common/error.h"

namespace vkspec::viewer {

FrameWriter::FrameWriter(size_t depth) : depth_(depth ? depth : 1) {
  thread_ = std::thread([this] { loop(); });
}

FrameWriter::~FrameWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void FrameWriter::add(std::string path, Image image) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < depth_; });
  queue_.emplace_back(std::move(path), std::move(image));
  changed_.notify_all();
}

void FrameWriter::check() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.empty()) return;
  std::string e;
  e.swap(error_);
  throw Error(e);
}

void FrameWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void FrameWriter::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;  // quit with nothing left
    auto item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    changed_.notify_all();
    lock.unlock();
    std::string err;
    try {
      item.second.write_png(item.first);
    } catch (const std::exception& e) {
      err = e.what();
    }
    lock.lock();
    busy_ = false;
    if (!err.empty() && error_.empty()) error_ = err;
    changed_.notify_all();
  }
}

}  // namespace vkspec::viewer
