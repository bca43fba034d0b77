#include "decoding/ar_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "engine/ops/sampler.h"

namespace vkspec {

ArStrategy::ArStrategy(const ModelSet& models, const StrategyInputs& in, int64_t tokens_per_submit)
    : Strategy("ar", models, in, 1), per_submit_(tokens_per_submit) {
  if (per_submit_ < 1) throw Error("ar: tokens per submit must be >= 1, got " + std::to_string(per_submit_));
  Context& ctx = *models.ctx;
  tokens_ = ctx.tensor(DType::U32, {per_submit_}, "ar sampled tokens", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {1, vocab()}, "ar probabilities");
}

void ArStrategy::decode(StepEvent& e) {
  const int64_t n = committed_;  // the query after token n - 1 predicts image token n
  if (next_ == host_tokens_.size()) record_and_run(n);
  // One step per token and forward, as every strategy's events are; the forwards of a submit are
  // handed out one per step.
  const int32_t tok = checked_token(host_tokens_[next_++], n);
  grid_[static_cast<size_t>(n)] = tok;
  ++committed_;
  ++nfe_;
  e.proposed = {static_cast<int32_t>(n)};
  e.proposed_tokens = {tok};
  e.accepted = {static_cast<int32_t>(n)};
}

void record_ar_forwards(TargetSession& t, int64_t first, const std::vector<uint32_t>& last,
                        const ops::SamplerParams& params, const TensorView& seeds, const TensorView& probs,
                        const TensorView& tokens) {
  const int64_t G = t.images(), K = tokens.numel() / G;
  CommandStream& s = t.stream();
  for (int64_t k = 0; k < K; ++k) {
    const int64_t n = first + k;
    // Token n - 1 of each image: known on the host for the first forward, else sampled just before.
    const std::vector<uint32_t> fed = n == 0   ? std::vector<uint32_t>{}
                                      : k == 0 ? last
                                               : std::vector<uint32_t>(static_cast<size_t>(G), 0u);
    const GptBatch& b = t.causal(n, 1, fed);
    if (k > 0) s.copy(tokens.rows((k - 1) * G, G), b.token_ids());
    const GptOutputs out = t.forward(b);
    ops::sampler(s, out.logits, t.positions(n, 1), params, probs, tokens.rows(k * G, G), {}, seeds);
  }
}

void ArStrategy::record_and_run(int64_t first) {
  const int64_t K = std::min(per_submit_, image_tokens() - first);
  TargetSession& t = target();
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Sample));
  std::vector<uint32_t> last;
  if (first > 0) last.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(first - 1)]));
  record_ar_forwards(t, first, last, sp, {}, probs_, tokens_.view().rows(0, K));
  t.submit_and_wait();
  host_tokens_.resize(static_cast<size_t>(K));
  t.ctx().download(tokens_, 0, host_tokens_.data(), host_tokens_.size() * 4);
  next_ = 0;
}

ArBatchStrategy::ArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in,
                                 int64_t tokens_per_submit)
    : BatchStrategy("ar", models, in, 1), per_submit_(tokens_per_submit) {
  if (per_submit_ < 1) throw Error("ar: tokens per submit must be >= 1, got " + std::to_string(per_submit_));
  Context& ctx = *models.ctx;
  const int64_t G = static_cast<int64_t>(images());
  tokens_ = ctx.tensor(DType::U32, {per_submit_ * G}, "ar sampled tokens", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {G, vocab()}, "ar probabilities");
  std::vector<uint64_t> seeds;
  for (const Image& im : images_) seeds.push_back(im.in.seed);
  seeds_ = ctx.tensor(DType::U32, {G, 2}, "ar image seeds");
  ctx.upload(seeds_, seeds.data(), seeds.size() * 8);  // low word first, as the sampler reads them
}

void ArBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  const int64_t n = committed_, G = static_cast<int64_t>(images());
  if (next_ == submitted_) {
    TargetSession& t = target();
    const int64_t K = std::min(per_submit_, image_tokens() - n);
    const StrategyInputs& in = images_[0].in;  // the settings every image shares (batch_strategy.cpp)
    const ops::SamplerParams sp = in.sampler.op_params(vocab(), in.seed, ops::SampleMode::Categorical,
                                                       philox::purpose_word(philox::Purpose::Sample));
    std::vector<uint32_t> last;
    for (const Image& im : images_)
      if (n > 0) last.push_back(static_cast<uint32_t>(im.grid[static_cast<size_t>(n - 1)]));
    record_ar_forwards(t, n, last, sp, seeds_.view(), probs_, tokens_.view().rows(0, K * G));
    t.submit_and_wait();
    host_tokens_.resize(static_cast<size_t>(K * G));
    t.ctx().download(tokens_, 0, host_tokens_.data(), host_tokens_.size() * 4);
    next_ = 0;
    submitted_ = K;
  }
  for (size_t g = 0; g < images_.size(); ++g) {
    Image& im = images_[g];
    const int32_t tok = checked_token(host_tokens_[static_cast<size_t>(next_ * G) + g], g, n);
    im.grid[static_cast<size_t>(n)] = tok;
    ++im.committed;
    ++im.nfe;
    events[g].proposed = {static_cast<int32_t>(n)};
    events[g].proposed_tokens = {tok};
    events[g].accepted = {static_cast<int32_t>(n)};
    advanced[g] = true;
  }
  ++next_;
  ++committed_;
}

namespace {

StrategyDescriptor ar() {
  StrategyDescriptor d;
  d.name = "ar";
  d.order = 0;
  d.reference_method = true;
  d.summary = "one token per forward pass, left to right: the reference every method is compared with";
  d.reference = "LlamaGen (Sun et al. 2024), vanilla autoregressive sampling";
  d.options = {OptionSpec::integer("tokens-per-submit", 1, 1, 4096,
                                   "forwards recorded per submit, each fed the token the one before sampled "
                                   "on the device: the host waits once per this many tokens (same tokens)")};
  d.lossless = [](const OptionValues&) { return true; };
  d.max_queries = [](const OptionValues&, const GptConfig&) -> int64_t { return 1; };
  d.fixed_queries = [](const OptionValues&) -> int64_t { return 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<ArStrategy>(m, in, o.integer("tokens-per-submit"));
  };
  d.make_batch = [](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                    int64_t) -> std::unique_ptr<BatchStrategy> {  // every image takes 256 steps: no lanes to free
    return std::make_unique<ArBatchStrategy>(m, in, o.integer("tokens-per-submit"));
  };
  return d;
}

const RegisterStrategy kAr(ar());

}  // namespace
}  // namespace vkspec
