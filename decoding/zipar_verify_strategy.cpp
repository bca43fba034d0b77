#include "decoding/zipar_verify_strategy.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {
namespace {

constexpr int32_t kNone = -1, kCondition = -2, kPlaceholder = -3;

AcceptRule verify_rule(const MethodOptions& o) {
  MethodOptions a;
  for (const char* key : {"k", "delta"})
    if (o.count(key)) a[key] = o.at(key);
  a["accept"] = option_choice(o, "zipar", "verify", "none", {"none", "exact", "lantern"});
  if (a["accept"] == "none") throw Error("zipar: verification needs --verify exact or --verify lantern");
  return parse_accept_options(a, "zipar", AcceptRule::Kind::Exact);
}

}  // namespace

ZipArVerifyStrategy::ZipArVerifyStrategy(const ModelSet& models, const StrategyInputs& in)
    : Strategy(models, in),
      rows_(in.sampler.uses_cfg() ? 2 : 1),
      W_(models.target->config().grid_size),
      cls_(models.target->config().cls_token_num),
      accept_(verify_rule(in.options)),
      cache_(models.target->make_cache(0, rows_)),
      stream_(*models.ctx, in.profile) {
  check_options(in.options, "zipar", strategy_options("zipar"));
  window_ = option_int(in.options, "zipar", "window", std::min<int64_t>(4, W_), 1, W_);
  if (cls_ != 1) throw Error("zipar: needs a class-conditional model with one condition token");
  const int64_t max_q = max_queries(W_), N = image_tokens(), V = models.target->config().vocab_size;
  if (max_q > models.target->options().max_queries)
    throw Error("zipar: verification on a " + std::to_string(W_) + "-wide grid needs " + std::to_string(max_q) +
                " queries per forward, the model was loaded for " +
                std::to_string(models.target->options().max_queries) + " (GptOptions::max_queries)");
  Context& ctx = *models.ctx;
  accept_ = bind_accept_rule(accept_, models, "zipar");
  if (accept_.kind != AcceptRule::Kind::Exact) relaxed_ = ctx.tensor(DType::F32, {max_q, V}, "zipar relaxed target");
  draft_.assign(static_cast<size_t>(N), kNone);
  slot_fed_.assign(static_cast<size_t>(cache_.slots()), kNone);
  q_ = ctx.tensor(DType::F32, {N, V}, "zipar draft distributions");
  p_ = ctx.tensor(DType::F32, {max_q, V}, "zipar target probabilities");
  positions_ = ctx.tensor(DType::U32, {std::max(N, max_q)}, "zipar positions", MemoryUsage::Upload);
  row_tokens_ = ctx.tensor(DType::U32, {max_q}, "zipar verified drafts", MemoryUsage::Upload);
  out_ = ctx.tensor(DType::U32, {3, max_q}, "zipar step results", MemoryUsage::Readback);
}

int32_t ZipArVerifyStrategy::token_at(int64_t n) const {
  const int32_t g = grid_[static_cast<size_t>(n)];
  return g != kUndecided ? g : draft_[static_cast<size_t>(n)];
}

int64_t ZipArVerifyStrategy::progress(int64_t r) const {
  int64_t c = 0;
  while (c < W_ && token_at(r * W_ + c) >= 0) ++c;
  return c;
}

StepEvent ZipArVerifyStrategy::step() {
  if (done()) throw Error("zipar: step() after the image is complete");
  const auto t0 = std::chrono::steady_clock::now();
  Context& ctx = *models_.ctx;
  Gpt& gpt = *models_.target;
  const GptConfig& cfg = gpt.config();
  CommandStream& s = stream_;
  const int64_t N = image_tokens(), c = committed_;
  const uint32_t round = static_cast<uint32_t>(step_);

  // The drafts at the frontier, verified under the full causal context, plus the row after them.
  int64_t D = 0;
  while (c + D < N && D < W_ && draft_[static_cast<size_t>(c + D)] >= 0) ++D;
  const bool extra = c + D < N;
  const int64_t Vq = D + (extra ? 1 : 0);
  std::vector<int64_t> slots, predicts;
  std::vector<int32_t> fed;  // kCondition for the condition query
  for (int64_t t = 0; t < Vq; ++t) {
    slots.push_back(cls_ + c + t - 1);
    predicts.push_back(c + t);
    fed.push_back(c + t == 0 ? kCondition : token_at(c + t - 1));
  }
  // Parallel rows (plain zipar's schedule over decided-or-drafted tokens).
  std::vector<int64_t> prog(static_cast<size_t>(W_));
  for (int64_t r = 0; r < W_; ++r) prog[static_cast<size_t>(r)] = progress(r);
  std::vector<bool> placeholder;
  for (int64_t r = 0; r < W_; ++r) {
    const int64_t col = prog[static_cast<size_t>(r)], m = r * W_ + col;
    if (col >= W_ || (r > 0 && prog[static_cast<size_t>(r - 1)] < std::min(col + window_, W_))) continue;
    if (m < c + Vq) continue;  // the verification rows cover it
    slots.push_back(cls_ + m - 1);
    predicts.push_back(m);
    int32_t f = m == 0 ? kCondition : token_at(m - 1);
    if (col == 0 && r > 0 && f < 0) {
      // The slot of (r-1, W-1) before that token exists: a placeholder input, hidden from others.
      const int32_t above = r >= 2 ? token_at((r - 1) * W_ - 1) : kNone;
      f = above >= 0 ? above : token_at((r - 1) * W_ + prog[static_cast<size_t>(r - 1)] - 1);
      placeholder.resize(slots.size(), false);
      placeholder.back() = true;
    }
    fed.push_back(f);
  }
  const int64_t sampled_end = static_cast<int64_t>(slots.size());
  placeholder.resize(slots.size(), false);
  // Slots below the last query whose key/value were computed with another token than the
  // position's current one.
  const int64_t top = *std::max_element(slots.begin(), slots.end());
  for (int64_t sl = cls_; sl < top && static_cast<int64_t>(slots.size()) < max_queries(W_); ++sl) {
    const int32_t tok = token_at(sl - cls_);
    if (tok < 0 || slot_fed_[static_cast<size_t>(sl)] == tok ||
        std::find(slots.begin(), slots.end(), sl) != slots.end())
      continue;
    slots.push_back(sl);
    predicts.push_back(0);
    fed.push_back(tok);
    placeholder.push_back(false);
  }
  const int64_t T = static_cast<int64_t>(slots.size());
  for (int64_t i = 0; i < T; ++i)
    slot_fed_[static_cast<size_t>(slots[static_cast<size_t>(i)])] =
        placeholder[static_cast<size_t>(i)] ? kPlaceholder : fed[static_cast<size_t>(i)];
  auto valid = [&](int64_t sl) {
    const int32_t f = slot_fed_[static_cast<size_t>(sl)];
    if (sl < cls_) return f == kCondition;
    return f >= 0 && f == token_at(sl - cls_);
  };
  std::vector<uint32_t> tokens, pos(static_cast<size_t>(T));
  const ClassLabel label(in_.class_id);
  for (int64_t i = 0; i < T; ++i) {
    if (fed[static_cast<size_t>(i)] != kCondition) tokens.push_back(static_cast<uint32_t>(fed[static_cast<size_t>(i)]));
    pos[static_cast<size_t>(i)] = static_cast<uint32_t>(predicts[static_cast<size_t>(i)]);
  }
  GptBatch batch(ctx, cfg,
                 GptQueries::at_positions(cfg, slots, tokens, guided_rows(label, rows_), cache_.slots(),
                                          [&](int64_t, int64_t sl) { return valid(sl); }),
                 rows_, cache_.slots());
  ctx.upload(positions_, 0, pos.data(), pos.size() * 4);
  std::vector<uint32_t> verified(static_cast<size_t>(Vq), ops::kNoToken);
  for (int64_t t = 0; t < D; ++t) verified[static_cast<size_t>(t)] = static_cast<uint32_t>(draft_[static_cast<size_t>(c + t)]);
  ctx.upload(row_tokens_, 0, verified.data(), verified.size() * 4);

  const int64_t max_q = p_.shape()[0];
  const TensorView flat = out_.view().reshape({3 * max_q});
  const TensorView acc = flat.rows(0, Vq), resolved = flat.rows(max_q, Vq), fresh = flat.rows(2 * max_q, T);
  const GptOutputs out = gpt.forward(s, batch, cache_);
  const ops::SamplerParams sp = in_.sampler.op_params(cfg.vocab_size, in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Draft, round));
  ops::sampler(s, out.logits, positions_.view().rows(0, T), sp, p_.view().rows(0, T), fresh);
  if (extra) s.fill(q_.view().rows(c + D, 1), 0u);  // the row without a draft: residual = p
  const TensorView q_rows = q_.view().rows(c, Vq), drafts = row_tokens_.view().rows(0, Vq);
  const TensorView p_rows = record_accept_target(s, accept_, models_, p_.view().rows(0, Vq), drafts,
                                                 relaxed_.valid() ? relaxed_.view().rows(0, Vq) : TensorView{});
  ops::spec_accept(s, p_rows, q_rows, drafts, positions_.view().rows(0, Vq), in_.seed,
                   philox::purpose_word(philox::Purpose::Accept, round), acc);
  ops::spec_residual_sample(s, p_rows, q_rows, positions_.view().rows(0, Vq), in_.seed,
                            philox::purpose_word(philox::Purpose::Residual, round), resolved, acc, drafts);
  for (int64_t i = Vq; i < sampled_end; ++i)
    s.copy(p_.view().rows(i, 1), q_.view().rows(predicts[static_cast<size_t>(i)], 1));
  s.submit_and_wait();
  std::vector<uint32_t> res(static_cast<size_t>(3 * max_q));
  ctx.download(out_, res.data(), res.size() * 4);

  StepEvent e;
  int64_t j = 0;
  while (j < D && res[static_cast<size_t>(j)]) ++j;
  auto check = [&](uint32_t tok, int64_t n) {
    if (tok >= cfg.vocab_size)
      throw Error("zipar: position " + std::to_string(n) + " resolved to token " + std::to_string(tok));
    return static_cast<int32_t>(tok);
  };
  for (int64_t t = 0; t < Vq; ++t) {
    e.proposed.push_back(static_cast<int32_t>(c + t));
    e.proposed_tokens.push_back(t < D ? draft_[static_cast<size_t>(c + t)]
                                      : static_cast<int32_t>(res[static_cast<size_t>(max_q + t)]));
  }
  for (int64_t t = 0; t < j; ++t) {
    grid_[static_cast<size_t>(c + t)] = draft_[static_cast<size_t>(c + t)];
    e.accepted.push_back(static_cast<int32_t>(c + t));
  }
  const bool rejected = j < D;
  if (j < Vq) {  // the first rejected row, or the row after a fully accepted run
    const int64_t n = c + j;
    grid_[static_cast<size_t>(n)] = check(res[static_cast<size_t>(max_q + j)], n);
    if (rejected) {
      e.rejected.push_back(static_cast<int32_t>(n));
      e.resampled.push_back(static_cast<int32_t>(n));
    } else {
      e.accepted.push_back(static_cast<int32_t>(n));
    }
  }
  const int64_t new_c = c + std::min(j + 1, Vq);
  for (int64_t n = c; n < new_c; ++n) draft_[static_cast<size_t>(n)] = kNone;
  if (rejected) {
    // Drafts after a rejected token may have seen it: all of them go.
    for (int64_t n = new_c; n < N; ++n) draft_[static_cast<size_t>(n)] = kNone;
  } else {
    for (int64_t i = Vq; i < sampled_end; ++i) {
      const int64_t m = predicts[static_cast<size_t>(i)];
      draft_[static_cast<size_t>(m)] = check(res[static_cast<size_t>(2 * max_q + i)], m);
      e.proposed.push_back(static_cast<int32_t>(m));
      e.proposed_tokens.push_back(draft_[static_cast<size_t>(m)]);
    }
  }
  committed_ = new_c;
  ++nfe_;
  e.device_ms = s.total_ms();
  e.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  finish_event(e);
  return e;
}

}  // namespace vkspec
