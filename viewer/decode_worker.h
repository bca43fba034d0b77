#pragma once
// The decode thread: advances the runs on screen (one or two lanes, stepped alternately so their
// NFE counts race) and VQ-decodes the grid after every step, so the UI thread never waits for the
// model. Runs are replaced without waiting: the thread switches after its current step.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "viewer/frame_decoder.h"
#include "viewer/run_record.h"
#include "viewer/step_source.h"

namespace vkspec::viewer {

struct Lane {
  std::unique_ptr<StepSource> source;
  std::shared_ptr<RunRecord> record;
};

class DecodeWorker {
 public:
  explicit DecodeWorker(std::unique_ptr<FrameDecoder> decoder);
  ~DecodeWorker();
  DecodeWorker(const DecodeWorker&) = delete;
  DecodeWorker& operator=(const DecodeWorker&) = delete;

  // Replaces the current runs (they end as Cancelled); returns at once.
  void start(std::vector<Lane> lanes);
  const FrameDecoder& decoder() const { return *decoder_; }

 private:
  void loop();
  void step(Lane& lane);

  std::unique_ptr<FrameDecoder> decoder_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Lane> pending_;
  bool has_pending_ = false, quit_ = false;
  std::thread thread_;
};

}  // namespace vkspec::viewer
