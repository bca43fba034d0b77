#pragma once
// The runs on screen, racing: a lane per run (live from the models, or replayed from a trace), the
// decode worker that steps them, and the timeline over their steps.
#include <memory>
#include <vector>

#include "decoding/trace_reader.h"
#include "frontend/model_loading.h"
#include "viewer/decode_worker.h"
#include "viewer/display.h"
#include "viewer/lane_view.h"
#include "viewer/timeline.h"

namespace vkspec::viewer {

class Runs {
 public:
  Runs(Context& ctx, Display& display, std::unique_ptr<FrameDecoder> decoder, int64_t grid);
  // Stops the decode thread and waits for the queue before the canvases go.
  ~Runs();
  Runs(const Runs&) = delete;
  Runs& operator=(const Runs&) = delete;

  // Replace the runs on screen (the old ones end as cancelled), all on `condition` (a class label,
  // a prompt's) and seed.
  void start_live(const std::vector<frontend::MethodRun>& runs, const ModelSet& models,
                  std::shared_ptr<const Condition> condition, uint64_t seed, const SamplerSettings& sampler);
  // Images of `trace` by index; indices outside it are left out (-1: no comparison).
  void start_replay(const Trace& trace, const std::vector<int64_t>& images);

  // Once per frame before the UI: the lanes' newest steps, the timeline, the canvases.
  void update(double dt, double replay_speed);

  std::vector<LaneView>& lanes() { return lanes_; }
  const std::vector<LaneView>& lanes() const { return lanes_; }
  Timeline& timeline() { return timeline_; }
  const Timeline& timeline() const { return timeline_; }
  int64_t available_steps() const;
  bool ended() const;  // every run has ended
  // What --screenshot waits for is shown: the pinned step in every lane (every lane's last step
  // when a pinned step is not enough, whole_runs: they are saved too) or the last step of all.
  bool settled(bool whole_runs) const;

 private:
  void install(std::vector<Lane> lanes, std::vector<LaneView> views, bool replay);
  void update_canvases();

  Context& ctx_;
  Display& display_;
  int64_t grid_;
  std::vector<LaneView> lanes_;
  Timeline timeline_;
  std::unique_ptr<DecodeWorker> worker_;
};

}  // namespace vkspec::viewer
