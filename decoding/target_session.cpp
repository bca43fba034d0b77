#include "decoding/target_session.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"
#include "decoding/strategy_inputs.h"

namespace vkspec {
namespace {

Gpt& checked_target(const ModelSet& m) {
  if (!m.ctx || !m.target) throw Error("a strategy needs a context and a target model");
  return *m.target;
}

}  // namespace

TargetSession::TargetSession(const ModelSet& models, const StrategyInputs& in, const std::string& method,
                             int64_t max_queries, int64_t scratch_slots, bool prefill)
    : TargetSession(models, std::vector<StrategyInputs>{in}, method, max_queries, scratch_slots, prefill) {}

TargetSession::TargetSession(const ModelSet& models, const std::vector<StrategyInputs>& images,
                             const std::string& method, int64_t max_queries, int64_t scratch_slots, bool prefill)
    : ctx_(*models.ctx),
      model_(checked_target(models)),
      images_(static_cast<int64_t>(images.size())),
      rows_(images_ * (images.empty() || images[0].sampler.uses_cfg() ? 2 : 1)),
      max_queries_(max_queries),
      cache_(model_.make_cache(scratch_slots, std::max<int64_t>(rows_, 1))),
      stream_(*models.ctx, !images.empty() && images[0].profile) {
  if (images.empty()) throw Error(method + ": no images to decode");
  const int64_t limit = model_.options().max_queries;
  if (max_queries > limit)
    throw Error(method + ": needs " + std::to_string(max_queries) + " queries per forward with these options, " +
                model_.path() + " was loaded for at most " + std::to_string(limit) + " (GptOptions::max_queries)");
  for (const StrategyInputs& in : images) {
    if (!in.condition) throw Error(method + ": needs a condition (a class label or caption embeddings)");
    held_.push_back(in.condition);
    conditions_.push_back(in.condition.get());
  }
  if (rows_ == 2 * images_)  // the null rows: each condition's null form (nullptr: the model's own)
    for (int64_t g = 0; g < images_; ++g) conditions_.push_back(conditions_[static_cast<size_t>(g)]->null_form());
  const int64_t n = config().image_tokens() + 1;
  std::vector<uint32_t> positions(static_cast<size_t>(n * images_));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<uint32_t>(i / static_cast<size_t>(images_));
  positions_ = ctx_.tensor(DType::U32, {n * images_}, method + " positions");
  ctx_.upload(positions_, positions.data(), positions.size() * 4);
  stream_.set_stage(stage::kSampling);  // what a step records outside a forward, from the first command
  if (prefill) record_prefill(model_, cache_, stage::kTarget);
}

const std::vector<const Condition*>& TargetSession::conditions(const Gpt& model) {
  if (&model == &model_) return conditions_;
  auto it = model_conditions_.find(&model);
  if (it != model_conditions_.end()) return it->second.rows;
  ModelConditions m;
  for (int64_t g = 0; g < images_; ++g) {
    const std::shared_ptr<const Condition>& c = held_[static_cast<size_t>(g)];
    std::shared_ptr<const Condition> own = model.own_condition(*c);
    m.rows.push_back(own ? own.get() : c.get());
    if (own) m.held.push_back(std::move(own));
  }
  if (rows_ == 2 * images_)
    for (int64_t g = 0; g < images_; ++g) m.rows.push_back(m.rows[static_cast<size_t>(g)]->null_form());
  return model_conditions_.emplace(&model, std::move(m)).first->second.rows;
}

KvCache TargetSession::make_cache(Gpt& model, const char* stage_name) {
  KvCache cache = model.make_cache(0, rows_);
  record_prefill(model, cache, stage_name);
  return cache;
}

void TargetSession::prefill_queries(const Gpt& model, const KvCache& cache,
                                    const std::function<void(const GptBatch&)>& record) {
  const GptConfig& cfg = model.config();
  // In chunks of what one forward of the model may run (LlamaGen's 119 caption positions exceed
  // the 64 queries models are loaded for by default); logits unused, only keys and values matter.
  const int64_t chunk = model.options().max_queries;
  for (int64_t first = 0; first < cfg.cls_token_num - 1; first += chunk) {
    const int64_t n = std::min(chunk, cfg.cls_token_num - 1 - first);
    // Every image's own caption padding hidden: the batch must know the images its rows serve.
    record(batch_for(model, cache, GptQueries::causal(cfg, first, n, {}, conditions(model), cache.slots(), images_)));
  }
}

void TargetSession::record_prefill(Gpt& model, const KvCache& cache, const char* stage_name) {
  prefill_queries(model, cache, [&](const GptBatch& b) { forward_of(model, b, cache, stage_name); });
}

TensorView TargetSession::positions(int64_t first, int64_t n) const {
  if (images_ > 1 && n != 1) throw Error("target session: positions of several images are taken one at a time");
  return positions_.view().rows(first * images_, n * images_);
}

const GptBatch& TargetSession::causal(int64_t n, int64_t q, const std::vector<uint32_t>& tokens) {
  GptQueries queries = GptQueries::causal(config(), query_position(n), q, tokens, conditions_, cache_.slots(), images_);
  return batch(queries);
}

const GptBatch& TargetSession::at_positions(const std::vector<int64_t>& slots, const std::vector<uint32_t>& tokens,
                                            const std::function<bool(int64_t, int64_t)>& sees) {
  GptQueries queries = GptQueries::at_positions(config(), slots, tokens, conditions_, cache_.slots(), sees);
  queries.images = images_;
  return batch(queries);
}

const GptBatch& TargetSession::batch(const GptQueries& q) { return batch_for(model_, cache_, q); }

const GptBatch& TargetSession::batch_for(const Gpt& model, const KvCache& cache, const GptQueries& q) {
  BatchPool& pool = pools_[{&model, cache.slots()}];
  if (pool.used == pool.batches.size())
    pool.batches.push_back(std::make_unique<GptBatch>(ctx_, model.config(), rows_, model.options().max_queries,
                                                      cache.slots()));
  GptBatch& b = *pool.batches[pool.used++];
  b.assign(q);
  // The target's kernels are planned for the strategy's most queries, whatever this forward runs:
  // an image's tokens are then the same alone and padded in a batch (GptBatch::plan_queries).
  // Other models' forwards are not padded across images.
  b.set_plan_queries(&model == &model_ ? max_queries_ : 0);
  return b;
}

GptOutputs TargetSession::forward(const GptBatch& batch) { return forward_of(model_, batch, cache_, stage::kTarget); }

GptOutputs TargetSession::forward_of(Gpt& model, const GptBatch& batch, const KvCache& cache, const char* stage_name) {
  stream_.set_stage(stage_name);
  const GptOutputs out = model.forward(stream_, batch, cache);
  stream_.set_stage(stage::kSampling);
  return out;
}

void TargetSession::begin_step() {
  step_ms_ = 0;
  step_by_stage_.clear();
  step_by_kernel_.clear();
}

void TargetSession::submit_and_wait() {
  stream_.submit_and_wait();
  step_ms_ += stream_.total_ms();
  for (const auto& [stage, ms] : stream_.ms_by_stage()) step_by_stage_[stage] += ms;
  for (const auto& [key, t] : stream_.ms_by_kernel()) step_by_kernel_[key] += t;
  for (auto& [key, pool] : pools_) pool.used = 0;
}

}  // namespace vkspec
