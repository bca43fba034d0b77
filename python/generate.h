#pragma once
// generate() and steps() of the module on a Session: the strategies run through the loop the CLI
// runs (decoding/generation.h), and `between_steps` (the Python signal check) may throw to stop.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "decoding/generation.h"
#include "engine/image/image.h"
#include "python/run_options.h"
#include "python/session.h"

namespace vkspec::python {

struct GenerateResult {
  SamplerSettings sampler;
  std::vector<Generation> generations;  // per image, in seed order
  std::vector<Image> images;            // the same order, [H, W, 3]
};

// The images with these seeds (and classes, see image_inputs), `run.batch` at a time.
GenerateResult generate(Session& session, const RunOptions& run, const std::vector<uint64_t>& seeds,
                        const std::vector<int64_t>& classes, const std::function<void()>& between_steps);

// One image's decoding, a step at a time: what the viewer draws.
class StepRun {
 public:
  // cls: the image's class (ignored with a caption); decode_images: decode the partial image
  // after every step (undecided cells as token 0, as the viewer shows them).
  StepRun(std::shared_ptr<Session> session, const RunOptions& run, uint64_t seed, int64_t cls, bool decode_images);
  ~StepRun();
  StepRun(const StepRun&) = delete;
  StepRun& operator=(const StepRun&) = delete;

  bool done() const { return strategy_->done(); }
  Session& session() { return *session_; }
  const std::shared_ptr<Session>& shared_session() const { return session_; }
  int64_t grid_size() const { return grid_size_; }
  struct Step {
    StepEvent event;
    std::optional<Image> image;
  };
  Step next();  // the session's mutex must be held

 private:
  std::shared_ptr<Session> session_;
  std::unique_ptr<Strategy> strategy_;
  int64_t grid_size_ = 0;
  bool decode_images_ = true;
};

}  // namespace vkspec::python
