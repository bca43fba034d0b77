#include "decoding/zipar_strategy.h"

#include <algorithm>
#include <chrono>

#include "engine/ops/sampler.h"
#include "common/error.h"

namespace vkspec {

ZipArStrategy::ZipArStrategy(const ModelSet& models, const StrategyInputs& in)
    : Strategy(models, in),
      rows_(in.sampler.uses_cfg() ? 2 : 1),
      W_(models.target->config().grid_size),
      cache_(models.target->make_cache(0, rows_)),
      stream_(*models.ctx, in.profile) {
  check_options(in.options, "zipar", strategy_options("zipar"));
  const GptConfig& cfg = models.target->config();
  if (cfg.cls_token_num != 1)
    throw Error("zipar: needs a class-conditional model with one condition token, " + models.target->path() + " has " +
                std::to_string(cfg.cls_token_num));
  window_ = option_int(in.options, "zipar", "window", std::min<int64_t>(4, W_), 1, W_);
  option_choice(in.options, "zipar", "verify", "none", {"none", "exact", "lantern"});
  // One query per active row plus at most one placeholder repair.
  const int64_t max_q = W_ + 1;
  if (max_q > models.target->options().max_queries)
    throw Error("zipar: a " + std::to_string(W_) + "-row grid needs " + std::to_string(max_q) +
                " queries per forward, the model was loaded for " +
                std::to_string(models.target->options().max_queries) + " (GptOptions::max_queries)");
  next_col_.assign(static_cast<size_t>(W_), 0);
  placeholder_.assign(static_cast<size_t>(W_), false);
  slot_valid_.assign(static_cast<size_t>(cache_.slots()), false);
  Context& ctx = *models.ctx;
  positions_ = ctx.tensor(DType::U32, {max_q}, "zipar sample positions", MemoryUsage::Upload);
  tokens_ = ctx.tensor(DType::U32, {max_q}, "zipar sampled tokens", MemoryUsage::Readback);
  probs_ = ctx.tensor(DType::F32, {max_q, cfg.vocab_size}, "zipar probabilities");
}

std::vector<int64_t> ZipArStrategy::active_rows() const {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < W_; ++r) {
    const int64_t c = next_col_[static_cast<size_t>(r)];
    if (c >= W_) continue;
    if (r > 0 && next_col_[static_cast<size_t>(r - 1)] < std::min(c + window_, W_)) continue;
    rows.push_back(r);
  }
  return rows;
}

uint32_t ZipArStrategy::fed_token_for_row_start(int64_t r) const {
  auto at = [&](int64_t row, int64_t col) { return grid_[static_cast<size_t>(row * W_ + col)]; };
  if (next_col_[static_cast<size_t>(r - 1)] == W_) return static_cast<uint32_t>(at(r - 1, W_ - 1));
  if (r >= 2 && at(r - 2, W_ - 1) != kUndecided) return static_cast<uint32_t>(at(r - 2, W_ - 1));
  return static_cast<uint32_t>(at(r - 1, next_col_[static_cast<size_t>(r - 1)] - 1));
}

StepEvent ZipArStrategy::step() {
  if (done()) throw Error("zipar: step() after the image is complete");
  const auto t0 = std::chrono::steady_clock::now();
  Context& ctx = *models_.ctx;
  Gpt& gpt = *models_.target;
  const GptConfig& cfg = gpt.config();
  const int64_t cls = cfg.cls_token_num;

  // The queries: one per active row (predicting token m from the slot of token m - 1), then the
  // repair of a placeholder whose real token now exists.
  struct Query {
    int64_t slot;      // = sequence position
    uint32_t fed;      // image token fed (unused for the condition query)
    int64_t predicts;  // image token sampled, -1 for a repair
    bool real_input;   // the fed token is the committed token of that position
  };
  std::vector<Query> queries;
  for (int64_t r : active_rows()) {
    const int64_t m = r * W_ + next_col_[static_cast<size_t>(r)];
    Query q{cls + m - 1, 0, m, true};
    if (m > 0) {
      const bool row_start = next_col_[static_cast<size_t>(r)] == 0;
      q.fed = row_start ? fed_token_for_row_start(r) : static_cast<uint32_t>(grid_[static_cast<size_t>(m - 1)]);
      q.real_input = !row_start || next_col_[static_cast<size_t>(r - 1)] == W_;
      if (!q.real_input) placeholder_[static_cast<size_t>(r)] = true;
    }
    queries.push_back(q);
  }
  const int64_t sampled = static_cast<int64_t>(queries.size());
  for (int64_t r = 1; r < W_; ++r)
    if (placeholder_[static_cast<size_t>(r)] && next_col_[static_cast<size_t>(r - 1)] == W_ &&
        std::none_of(queries.begin(), queries.end(), [&](const Query& q) { return q.slot == cls + r * W_ - 1; })) {
      queries.push_back({cls + r * W_ - 1, static_cast<uint32_t>(grid_[static_cast<size_t>(r * W_ - 1)]), -1, true});
      placeholder_[static_cast<size_t>(r)] = false;
    }
  // A query's slot is valid once written with its real input; visibility is decided after this
  // forward's writes, so queries see each other's committed-token slots below their own position.
  for (const Query& q : queries) slot_valid_[static_cast<size_t>(q.slot)] = q.real_input;

  const int64_t T = static_cast<int64_t>(queries.size());
  std::vector<int64_t> slots;
  std::vector<uint32_t> fed, pos;
  for (const Query& q : queries) {
    slots.push_back(q.slot);
    if (q.slot >= cls) fed.push_back(q.fed);
    pos.push_back(static_cast<uint32_t>(std::max<int64_t>(q.predicts, 0)));
  }
  const ClassLabel label(in_.class_id);
  const GptQueries gq = GptQueries::at_positions(cfg, slots, fed, guided_rows(label, rows_), cache_.slots(),
                                                 [&](int64_t, int64_t s) { return slot_valid_[static_cast<size_t>(s)]; });
  GptBatch batch(ctx, cfg, gq, rows_, cache_.slots());
  ctx.upload(positions_, 0, pos.data(), pos.size() * 4);

  CommandStream& s = stream_;
  const GptOutputs out = gpt.forward(s, batch, cache_);
  const ops::SamplerParams sp = in_.sampler.op_params(
      cfg.vocab_size, in_.seed, ops::SampleMode::Categorical, philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(s, out.logits, positions_.view().rows(0, T), sp, probs_.view().rows(0, T), tokens_.view().rows(0, T));
  s.submit_and_wait();
  std::vector<uint32_t> toks(static_cast<size_t>(T));
  ctx.download(tokens_, 0, toks.data(), toks.size() * 4);

  StepEvent e;
  for (int64_t i = 0; i < sampled; ++i) {
    const Query& q = queries[static_cast<size_t>(i)];
    const uint32_t tok = toks[static_cast<size_t>(i)];
    if (tok >= cfg.vocab_size)
      throw Error("zipar: sampler returned token " + std::to_string(tok) + " outside the vocabulary");
    grid_[static_cast<size_t>(q.predicts)] = static_cast<int32_t>(tok);
    ++next_col_[static_cast<size_t>(q.predicts / W_)];
    e.proposed.push_back(static_cast<int32_t>(q.predicts));
    e.proposed_tokens.push_back(static_cast<int32_t>(tok));
    e.accepted.push_back(static_cast<int32_t>(q.predicts));
  }
  committed_ += sampled;
  ++nfe_;
  e.device_ms = s.total_ms();
  e.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  finish_event(e);
  return e;
}

}  // namespace vkspec
