#include "decoding/batch_strategy.h"

#include <chrono>

#include "common/error.h"

namespace vkspec {
namespace {

const std::vector<StrategyInputs>& checked(const std::string& method, const ModelSet& models,
                                           const std::vector<StrategyInputs>& in) {
  if (!models.ctx || !models.target) throw Error(method + ": a strategy needs a context and a target model");
  if (in.empty()) throw Error(method + ": a batch of no images");
  for (const StrategyInputs& i : in) {
    if (!i.condition) throw Error(method + ": needs a condition (a class label or caption embeddings)");
    i.condition->check(models.target->config());
    i.sampler.validate();
    // One forward and one sampler call serve every image: only the condition and the seed differ.
    if (i.sampler.str() != in[0].sampler.str() || i.options != in[0].options || i.profile != in[0].profile)
      throw Error(method + ": the images of a batch must share sampler settings and method options");
  }
  return in;
}

std::vector<StrategyInputs> first_lanes(const std::vector<StrategyInputs>& in, int64_t lanes) {
  if (lanes < 0 || lanes > static_cast<int64_t>(in.size()))
    throw Error("a batch of " + std::to_string(in.size()) + " images cannot fill " + std::to_string(lanes) + " lanes");
  if (lanes == 0) return in;
  return {in.begin(), in.begin() + lanes};
}

}  // namespace

BatchStrategy::BatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in,
                             int64_t max_queries, int64_t scratch_slots, int64_t lanes, bool prefill)
    : models_(models),
      method_(std::move(method)),
      target_(models, first_lanes(checked(method_, models, in), lanes), method_, max_queries, scratch_slots, prefill) {
  for (const StrategyInputs& i : in)
    images_.push_back({i, std::vector<int32_t>(static_cast<size_t>(image_tokens()), kUndecided)});
}

bool BatchStrategy::done(size_t image) const {
  const Image& im = images_[image];
  return im.committed == static_cast<int64_t>(im.grid.size());
}

bool BatchStrategy::done() const {
  for (size_t i = 0; i < images_.size(); ++i)
    if (!done(i)) return false;
  return true;
}

std::vector<BatchEvent> BatchStrategy::step() {
  if (done()) throw Error(method_ + ": step() after every image of the batch is complete");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<StepEvent> events(images_.size());
  std::vector<bool> advanced(images_.size(), false);
  target_.begin_step();
  decode(events, advanced);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<BatchEvent> out;
  for (size_t i = 0; i < images_.size(); ++i) {
    if (!advanced[i]) continue;
    StepEvent& e = events[i];
    e.device_ms = target_.device_ms();
    e.device_ms_by_stage = target_.ms_by_stage();
    e.device_ms_by_kernel = target_.ms_by_kernel();
    e.wall_ms = wall;
    e.step = images_[i].steps++;
    e.grid = images_[i].grid;
    e.committed = images_[i].committed;
    e.nfe = images_[i].nfe;
    e.head_forwards = images_[i].head_forwards;
    e.draft_forwards = images_[i].draft_forwards;
    e.done = done(i);
    out.push_back({i, std::move(e)});
  }
  ++step_;
  return out;
}

int32_t BatchStrategy::checked_token(uint32_t token, size_t image, int64_t position) const {
  if (token >= static_cast<uint32_t>(vocab()))
    throw Error(method_ + ": the GPU resolved position " + std::to_string(position) + " of image " +
                std::to_string(image) + " (seed " + std::to_string(images_[image].in.seed) + ") to token " +
                std::to_string(token) + ", outside the vocabulary");
  return static_cast<int32_t>(token);
}

std::unique_ptr<BatchStrategy> make_batch_strategy(const std::string& method, const ModelSet& models,
                                                   const std::vector<StrategyInputs>& in, int64_t lanes) {
  const StrategyDescriptor& d = find_strategy(method);
  if (!d.make_batch)
    throw Error(method + ": decodes one image per forward (--batch > 1 takes " + batch_method_names() + ")");
  if (in.empty()) throw Error(method + ": a batch of no images");
  const int64_t images = static_cast<int64_t>(in.size());
  if (lanes == 0) lanes = images;
  if (lanes < 1 || lanes > images || (lanes < images && !d.continuous_batching))
    throw Error(method + ": " + std::to_string(images) + " images cannot share " + std::to_string(lanes) + " lanes" +
                (d.continuous_batching ? "" : " (each image keeps its lane to the end)"));
  return d.make_batch(models, in, d.values(in[0].options), lanes);
}

}  // namespace vkspec
