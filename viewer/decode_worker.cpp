#include "viewer/decode_worker.h"

#include "engine/vk/vulkan_error.h"

namespace vkspec::viewer {

DecodeWorker::DecodeWorker(std::unique_ptr<FrameDecoder> decoder) : decoder_(std::move(decoder)) {
  thread_ = std::thread([this] { loop(); });
}

DecodeWorker::~DecodeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DecodeWorker::start(std::vector<Lane> lanes) {
  std::vector<Lane> dropped;  // lanes queued but never started; freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(pending_);
    pending_ = std::move(lanes);
    has_pending_ = true;
  }
  for (Lane& l : dropped) l.record->finish(RunState::Cancelled);
  wake_.notify_all();
}

void DecodeWorker::loop() {
  std::vector<Lane> lanes;
  for (;;) {
    Lane* next = nullptr;
    for (Lane& l : lanes)
      if (!l.record->ended() && (!next || l.record->size() < next->record->size())) next = &l;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!next) wake_.wait(lock, [&] { return has_pending_ || quit_; });
      if (quit_) break;
      if (has_pending_) {
        std::vector<Lane> fresh = std::move(pending_);
        pending_.clear();
        has_pending_ = false;
        lock.unlock();
        for (Lane& l : lanes) l.record->finish(RunState::Cancelled);
        // Sources (strategies with their device buffers) are destroyed here, on this thread.
        lanes = std::move(fresh);
        continue;
      }
    }
    step(*next);
  }
  for (Lane& l : lanes) l.record->finish(RunState::Cancelled);
  for (Lane& l : pending_) l.record->finish(RunState::Cancelled);
}

void DecodeWorker::step(Lane& lane) {
  try {
    if (lane.source->done()) {
      lane.record->finish(RunState::Finished);
      return;
    }
    auto frame = std::make_shared<StepFrame>();
    frame->event = lane.source->next();
    frame->image = decoder_->decode(frame->event.grid);
    const bool done = frame->event.done;
    lane.record->add(std::move(frame));
    if (done) lane.record->finish(RunState::Finished);
  } catch (const VulkanError& e) {
    lane.record->finish(RunState::Failed, e.what(), e.result() == VK_ERROR_DEVICE_LOST);
  } catch (const std::exception& e) {
    lane.record->finish(RunState::Failed, e.what());
  }
}

}  // namespace vkspec::viewer
