#include "decoding/zipar_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/zipar_batch_strategy.h"
#include "decoding/zipar_verify_strategy.h"
#include "engine/ops/sampler.h"

namespace vkspec {

int64_t zipar_window(const OptionValues& o, int64_t W) {
  return o.integer_at_most("window", W, std::min<int64_t>(4, W));
}

// One query per active row plus at most one placeholder repair.
ZipArStrategy::ZipArStrategy(const ModelSet& models, const StrategyInputs& in, int64_t window)
    : Strategy("zipar", models, in, models.target->config().grid_size + 1),
      rows_(models.target->config().grid_size, window, models.target->config().cls_token_num,
            target().cache().slots()) {
  const GptConfig& cfg = models.target->config();
  const int64_t max_q = cfg.grid_size + 1;
  Context& ctx = *models.ctx;
  positions_ = ctx.tensor(DType::U32, {max_q}, "zipar sample positions", MemoryUsage::Upload);
  tokens_ = ctx.tensor(DType::U32, {max_q}, "zipar sampled tokens", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {max_q, cfg.vocab_size}, "zipar probabilities");
}

void ZipArStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  const int64_t cls = t.config().cls_token_num;
  const std::vector<ZipArQuery> queries = rows_.plan(grid_);
  const int64_t T = static_cast<int64_t>(queries.size());
  std::vector<int64_t> slots;
  std::vector<uint32_t> fed, pos;
  for (const ZipArQuery& q : queries) {
    slots.push_back(q.slot);
    if (q.slot >= cls) fed.push_back(q.fed);
    pos.push_back(static_cast<uint32_t>(std::max<int64_t>(q.predicts, 0)));
  }
  const GptBatch& batch = t.at_positions(slots, fed, [&](int64_t, int64_t s) { return rows_.slot_valid(s); });
  t.ctx().upload(positions_, 0, pos.data(), pos.size() * 4);

  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(t.stream(), out.logits, positions_.view().rows(0, T), sp, probs_.view().rows(0, T),
               tokens_.view().rows(0, T));
  t.submit_and_wait();
  std::vector<uint32_t> toks(static_cast<size_t>(T));
  t.ctx().download(tokens_, 0, toks.data(), toks.size() * 4);

  int64_t sampled = 0;
  for (int64_t i = 0; i < T; ++i) {
    const ZipArQuery& q = queries[static_cast<size_t>(i)];
    if (q.predicts < 0) continue;  // a repair
    const int32_t tok = checked_token(toks[static_cast<size_t>(i)], q.predicts);
    grid_[static_cast<size_t>(q.predicts)] = tok;
    rows_.sampled(q.predicts);
    e.proposed.push_back(static_cast<int32_t>(q.predicts));
    e.proposed_tokens.push_back(tok);
    e.accepted.push_back(static_cast<int32_t>(q.predicts));
    ++sampled;
  }
  committed_ += sampled;
  ++nfe_;
}

namespace {

StrategyDescriptor zipar() {
  StrategyDescriptor d;
  d.name = "zipar";
  d.order = 60;
  d.summary = "ZipAR: several rows decode in parallel once the row above is far enough ahead";
  d.reference = "He et al. 2024, ZipAR: Parallel Auto-regressive Image Generation through Spatial Locality; "
                "--verify is ours (docs/methods.md)";
  d.options = {
      OptionSpec::integer("window", 4, 1, 1 << 20,
                          "tokens a row stays behind the row above it (at most the grid width)"),
  };
  d.accept_rules = zipar_verify_slot();
  d.lossless = [](const OptionValues& o) { return o.choice("verify") != "none"; };  // and the rule lossless
  d.max_queries = [](const OptionValues& o, const GptConfig& t) {
    return o.choice("verify") != "none" ? ZipArVerifyStrategy::max_queries(t.grid_size) : t.grid_size + 1;
  };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    if (!m.target) throw Error("a strategy needs a context and a target model");
    const int64_t window = zipar_window(o, m.target->config().grid_size);
    if (o.choice("verify") != "none") return std::make_unique<ZipArVerifyStrategy>(m, in, window, o);
    chosen_accept_rule(o, zipar_verify_slot());  // throws for a rule's options without the rule
    return std::make_unique<ZipArStrategy>(m, in, window);
  };
  d.make_batch = [](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                    int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    if (o.choice("verify") != "none") throw Error("zipar --verify decodes one image per forward");
    chosen_accept_rule(o, zipar_verify_slot());
    return std::make_unique<ZipArBatchStrategy>(m, in, zipar_window(o, m.target->config().grid_size), lanes);
  };
  d.continuous_batching = true;
  return d;
}

const RegisterStrategy kZipAr(zipar());

}  // namespace
}  // namespace vkspec
