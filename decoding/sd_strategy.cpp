#include "decoding/sd_strategy.h"

#include "common/error.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

const ModelSet& checked(const ModelSet& m, const std::string& method) {
  if (!m.drafter)
    throw Error(method + ": needs a drafter model (--drafter FILE, a small GPT on the target's token grid)");
  if (!m.target) return m;  // Strategy's constructor names this error
  const GptConfig &t = m.target->config(), &d = m.drafter->config();
  if (d.vocab_size != t.vocab_size || d.grid_size != t.grid_size || d.num_classes != t.num_classes ||
      d.cls_token_num != t.cls_token_num)
    throw Error(method + ": drafter " + m.drafter->path() + " (vocab " + std::to_string(d.vocab_size) + ", grid " +
                std::to_string(d.grid_size) + ", classes " + std::to_string(d.num_classes) +
                ") does not match the target (vocab " + std::to_string(t.vocab_size) + ", grid " +
                std::to_string(t.grid_size) + ", classes " + std::to_string(t.num_classes) + ")");
  if (m.drafter->options().max_queries < 2) throw Error(method + ": the drafter must be loaded for at least 2 queries");
  return m;
}

}  // namespace

SdStrategy::SdStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, int64_t drafts,
                       const AcceptChoice& rule)
    : SpeculativeStrategy(method, checked(models, method), in, drafts),
      drafter_cache_(target().make_cache(*models.drafter, stage::kDrafter)) {
  set_accept_rule(rule);
  Context& ctx = *models.ctx;
  const int64_t gamma = max_drafts();
  q_ = ctx.tensor(DType::F32, {gamma + 2, vocab()}, "sd drafter distributions");
  tokens_ = ctx.tensor(DType::U32, {gamma + 2}, "sd drafts");
  // Recorded now, run with the first step's submit.
  stream().fill(q_.view(), 0u);
  stream().fill(tokens_.view().rows(gamma + 1, 1), ops::kNoToken);
}

void SdStrategy::record_drafts(int64_t c, int64_t G, uint32_t round) {
  Gpt& drafter = *models_.drafter;
  const GptConfig& dcfg = drafter.config();
  CommandStream& s = stream();
  // The drafter first catches up on committed tokens it has not seen (at most the previous step's
  // last draft and bonus token), then drafts one token per forward.
  const int64_t first = std::min(drafter_valid_, c);
  std::vector<uint32_t> fed;
  for (int64_t m = std::max<int64_t>(first, 1); m <= c; ++m)
    fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(m - 1)]));
  ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                philox::purpose_word(philox::Purpose::Draft, round));
  for (int64_t t = 0; t < G; ++t) {
    const int64_t start = t == 0 ? first : c + t, n = t == 0 ? c - first + 1 : 1;  // image tokens predicted
    const GptBatch& b = target().batch_for(drafter, drafter_cache_,
                                           GptQueries::causal(dcfg, target().query_position(start), n,
                                                              t == 0 ? fed : std::vector<uint32_t>{0},
                                                              target().conditions(drafter), drafter_cache_.slots()));
    if (t > 0) s.copy(tokens_.view().rows(t, 1), b.token_ids());
    const GptOutputs out = target().forward_of(drafter, b, drafter_cache_, stage::kDrafter);
    const int64_t r0 = 1 + t - (n - 1);  // row 1 + t is draft t; a catch-up row lands in row 0
    const TensorView q = q_.view().rows(r0, n), tok = tokens_.view().rows(r0, n);
    if (faults_.q_unfiltered) {
      ops::sampler(s, out.logits, positions(start, n), sp, p_scratch(n), tok);
      ops::SamplerParams unfiltered = sp;
      unfiltered.top_k = 0;
      unfiltered.top_p = 1.0f;
      unfiltered.mode = ops::SampleMode::None;
      ops::sampler(s, out.logits, {}, unfiltered, q, {});
    } else {
      ops::sampler(s, out.logits, positions(start, n), sp, q, tok);
    }
  }
}

void SdStrategy::decode(StepEvent& e) {
  const int64_t c = committed_, G = drafts_at(c), Q = queries_for(c, G);
  const uint32_t round = static_cast<uint32_t>(step_);
  record_drafts(c, G, round);
  CommandStream& s = stream();
  const GptBatch& batch = target_batch(c, Q, std::vector<uint32_t>(static_cast<size_t>(Q - 1), 0u));
  if (Q > 1) s.copy(tokens_.view().rows(1, Q - 1), batch.token_ids().rows(c > 0 ? 1 : 0, Q - 1));
  const TensorView p = record_target(batch, c, Q, ops::SampleMode::None, 0);
  record_verify(p, q_.view().rows(1, Q), tokens_.view().rows(1, Q), c, Q, round);
  record_fresh_copy(tokens_.view().rows(1, G));
  const Outcome o = finish(Q);

  commit(e, c, Q, std::vector<uint32_t>(o.fresh.begin(), o.fresh.begin() + G), o);
  drafter_valid_ = std::min(c + G, committed_);
  draft_forwards_ += G;
}

namespace {

StrategyDescriptor sd() {
  StrategyDescriptor d;
  d.name = "sd";
  d.order = 40;
  d.summary = "draft-model speculative decoding: a small model drafts, the large one verifies in one pass";
  d.reference = "Leviathan, Kalman, Matias, ICML 2023; Chen et al. 2023";
  d.options = {OptionSpec::integer("window", kSdDefaultDrafts, 1, 1024, "tokens the drafter proposes per step")};
  d.accept_rules = AcceptRuleSlot{};
  d.lossless = [](const OptionValues&) { return true; };  // when the rule is
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.drafter = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return o.integer("window") + 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<SdStrategy>("sd", m, in, o.integer("window"), parse_accept_choice(o));
  };
  return d;
}

const RegisterStrategy kSd(sd());

}  // namespace
}  // namespace vkspec
