#pragma once
// What every strategy needs of the target model for one image, in one place: the CFG batch rows
// and their conditions, the KV cache (slot = sequence position, spare slots after the sequence
// for candidates without a place yet), the command stream every step records into, the image
// positions the sampler and the Philox keys read, and the batches of the step, kept alive until
// its submit has finished. Drafter and low-resolution models run through the same session (same
// stream, same conditions, a cache of their own).
//
// Condition positions: a model with cls_token_num > 1 condition positions (LlamaGen's t2i: 120
// caption tokens) gets positions 0 .. cls_token_num - 2 computed once into each cache, with the
// first step's submit (prefill). Every strategy then sees what a class-conditional model has:
// the query at the last condition position, cls_token_num - 1, predicts image token 0
// (query_position(0)), and the slots below it are valid for every query.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt.h"

namespace vkspec {

// What a step's GPU work is for, as its commands are tagged (CommandStream::set_stage) and as
// benchmarks report time per model: the target's forwards, a drafter's, the low-resolution
// model's (with MuLo-SD's pixel path), the draft heads', and everything else a step records
// (sampling, acceptance, residuals, copies).
namespace stage {
inline constexpr const char* kTarget = "target";
inline constexpr const char* kDrafter = "drafter";
inline constexpr const char* kLowRes = "low_res";
inline constexpr const char* kHeads = "heads";
inline constexpr const char* kSampling = "sampling";
}  // namespace stage

struct ModelSet;
struct StrategyInputs;

class TargetSession {
 public:
  // method: named in errors. max_queries: the most queries one target forward of the strategy
  // runs (checked against what the model was loaded for). scratch_slots: spare KV slots.
  // prefill: record the target's condition positions with the first submit (false: the strategy
  // records them itself through prefill_queries, as FlashAR does to fill its branch's cache in
  // the same forwards).
  TargetSession(const ModelSet& models, const StrategyInputs& in, const std::string& method, int64_t max_queries,
                int64_t scratch_slots = 0, bool prefill = true);
  // Several images in every forward (batched decoding), one per entry of `images` (their
  // conditions; sampler settings and profiling from the first): rows [0, images) are the images'
  // conditional rows, [images, 2 images) their null rows with CFG, each with its own cache rows.
  TargetSession(const ModelSet& models, const std::vector<StrategyInputs>& images, const std::string& method,
                int64_t max_queries, int64_t scratch_slots = 0, bool prefill = true);
  TargetSession(const TargetSession&) = delete;
  TargetSession& operator=(const TargetSession&) = delete;

  Context& ctx() const { return ctx_; }
  Gpt& model() const { return model_; }
  const GptConfig& config() const { return model_.config(); }
  // Batch rows of every forward: 2 per image with classifier-free guidance (conditional, null), else 1.
  int64_t rows() const { return rows_; }
  // Images sharing every forward (1 but in batched decoding); causal() and at_positions() take
  // each image's tokens in turn.
  int64_t images() const { return images_; }
  int64_t max_queries() const { return max_queries_; }
  const KvCache& cache() const { return cache_; }
  CommandStream& stream() { return stream_; }
  const CommandStream& stream() const { return stream_; }
  // The condition of each batch row for the model's condition queries: the image's, then (with
  // CFG) the null form (nullptr).
  const std::vector<const Condition*>& conditions() const { return conditions_; }
  // The same rows as another model of the set (drafter, low-resolution model) takes them
  // (Gpt::own_condition: a Janus-Pro-1B drafter reads a prompt through its own text table, of its
  // own width); classes and caption embeddings are shared. Made on first use, kept for the session.
  const std::vector<const Condition*>& conditions(const Gpt& model);
  // Image positions [first, first + n) as u32 (position n at index n, n <= image tokens); with
  // several images, n = 1 only: position `first` once per image.
  TensorView positions(int64_t first, int64_t n) const;
  // Sequence position of the query that predicts image token n: the slot of token n - 1, or of
  // the last condition token for n = 0.
  int64_t query_position(int64_t n) const { return config().cls_token_num + n - 1; }

  // Batches of the current step, from a pool per model that submit_and_wait() hands back for the
  // next step (no allocation per forward once the pool has grown to a step's needs).
  // Queries predicting image tokens [n, n + q) causally; tokens: the image tokens they are fed,
  // in order (token n - 1 first when n > 0; the first query of an image is the condition's).
  const GptBatch& causal(int64_t n, int64_t q, const std::vector<uint32_t>& tokens);
  // Queries at sequence positions `slots` (condition positions first), each seeing its own slot
  // and the slots below it where sees(query, slot).
  const GptBatch& at_positions(const std::vector<int64_t>& slots, const std::vector<uint32_t>& tokens,
                               const std::function<bool(int64_t, int64_t)>& sees);
  // Any queries (candidate trees), on the target or (model, cache) another model of the set.
  const GptBatch& batch(const GptQueries& q);
  const GptBatch& batch_for(const Gpt& model, const KvCache& cache, const GptQueries& q);
  // Records the target's forward of `batch`; what follows counts as sampling.
  GptOutputs forward(const GptBatch& batch);
  // Records another model's forward (drafter, low-resolution model) under `stage_name`.
  GptOutputs forward_of(Gpt& model, const GptBatch& batch, const KvCache& cache, const char* stage_name);
  // Tags the commands recorded from now on (stage::kHeads around the draft heads, ...).
  void set_stage(const char* stage_name) { stream_.set_stage(stage_name); }
  // A KV cache for another model of the set (drafter, low-resolution model) with this session's
  // rows, its condition positions prefilled (under `stage_name`) with the first submit.
  KvCache make_cache(Gpt& model, const char* stage_name);
  // Calls `record` with the batches of `model`'s condition positions 0 .. cls_token_num - 2 for
  // `cache`, in chunks of what one forward of the model may run (none for one condition position).
  void prefill_queries(const Gpt& model, const KvCache& cache, const std::function<void(const GptBatch&)>& record);

  // Submits everything recorded since the last submit, waits, and hands the step's batches back.
  void submit_and_wait();
  // Starts a step: the GPU times below cover every submit from here on (a step may submit more
  // than once, e.g. a draft tree grown level by level).
  void begin_step();
  // GPU time of the step's submits (timestamps; 0 without profiling), in total, per stage and
  // per (stage, kernel).
  double device_ms() const { return step_ms_; }
  const std::map<std::string, double>& ms_by_stage() const { return step_by_stage_; }
  const KernelTimes& ms_by_kernel() const { return step_by_kernel_; }

 private:
  Context& ctx_;
  Gpt& model_;
  int64_t images_, rows_, max_queries_;
  std::vector<std::shared_ptr<const Condition>> held_;  // the images' conditions, kept alive
  std::vector<const Condition*> conditions_;
  struct ModelConditions {
    std::vector<std::shared_ptr<const Condition>> held;
    std::vector<const Condition*> rows;
  };
  std::map<const Gpt*, ModelConditions> model_conditions_;
  KvCache cache_;
  CommandStream stream_;
  Tensor positions_;  // u32 [(N + 1) * images]: n at indices n * images .. (n + 1) * images - 1
  // Per (model, cache slots): the batches it has, and how many this step has taken.
  struct BatchPool {
    std::vector<std::unique_ptr<GptBatch>> batches;
    size_t used = 0;
  };
  std::map<std::pair<const Gpt*, int64_t>, BatchPool> pools_;
  double step_ms_ = 0;
  std::map<std::string, double> step_by_stage_;
  KernelTimes step_by_kernel_;

  // Records the forward of condition positions 0 .. cls_token_num - 2 of `model` into `cache`.
  void record_prefill(Gpt& model, const KvCache& cache, const char* stage_name);
};

}  // namespace vkspec
