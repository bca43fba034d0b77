#include "decoding/zipar_verify_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

constexpr int32_t kNone = -1, kCondition = -2, kPlaceholder = -3;

}  // namespace

AcceptRuleSlot zipar_verify_slot() {
  AcceptRuleSlot slot;
  slot.option = "verify";
  slot.fallback = "none";
  slot.extra_choices = {"none"};
  slot.help = "verify the drafts at the raster frontier: none (the paper), or by an acceptance rule";
  return slot;
}

ZipArVerifyStrategy::ZipArVerifyStrategy(const ModelSet& models, const StrategyInputs& in, int64_t window,
                                         const OptionValues& o)
    : Strategy("zipar", models, in, max_queries(models.target->config().grid_size)),
      W_(models.target->config().grid_size),
      window_(window),
      cls_(models.target->config().cls_token_num),
      accept_(bind_accept_rule(parse_accept_choice(o, zipar_verify_slot()), models, "zipar",
                               max_queries(models.target->config().grid_size))) {
  const int64_t max_q = max_queries(W_), N = image_tokens(), V = vocab();
  Context& ctx = *models.ctx;
  draft_.assign(static_cast<size_t>(N), kNone);
  slot_fed_.assign(static_cast<size_t>(target().cache().slots()), kNone);
  std::fill(slot_fed_.begin(), slot_fed_.begin() + (cls_ - 1), kCondition);  // prefilled (TargetSession)
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

ZipArVerifyStrategy::Plan ZipArVerifyStrategy::plan() const {
  // The drafts at the frontier, verified under the full causal context, plus the row after them.
  Plan p;
  const int64_t N = image_tokens();
  p.c = committed_;
  while (p.c + p.D < N && p.D < W_ && draft_[static_cast<size_t>(p.c + p.D)] >= 0) ++p.D;
  p.verified = p.D + (p.c + p.D < N ? 1 : 0);
  for (int64_t t = 0; t < p.verified; ++t) {
    p.slots.push_back(cls_ + p.c + t - 1);
    p.predicts.push_back(p.c + t);
    p.fed.push_back(p.c + t == 0 ? kCondition : token_at(p.c + t - 1));
  }
  add_parallel_rows(p);
  p.sampled_end = static_cast<int64_t>(p.slots.size());
  p.placeholder.resize(p.slots.size(), false);
  add_stale_slots(p);
  return p;
}

void ZipArVerifyStrategy::add_parallel_rows(Plan& p) const {
  // Plain zipar's schedule over decided-or-drafted tokens.
  std::vector<int64_t> prog(static_cast<size_t>(W_));
  for (int64_t r = 0; r < W_; ++r) prog[static_cast<size_t>(r)] = progress(r);
  for (int64_t r = 0; r < W_; ++r) {
    const int64_t col = prog[static_cast<size_t>(r)], m = r * W_ + col;
    if (col >= W_ || (r > 0 && prog[static_cast<size_t>(r - 1)] < std::min(col + window_, W_))) continue;
    if (m < p.c + p.verified) continue;  // the verification rows cover it
    p.slots.push_back(cls_ + m - 1);
    p.predicts.push_back(m);
    int32_t f = m == 0 ? kCondition : token_at(m - 1);
    if (col == 0 && r > 0 && f < 0) {
      // The slot of (r-1, W-1) before that token exists: a placeholder input, hidden from others.
      const int32_t above = r >= 2 ? token_at((r - 1) * W_ - 1) : kNone;
      f = above >= 0 ? above : token_at((r - 1) * W_ + prog[static_cast<size_t>(r - 1)] - 1);
      p.placeholder.resize(p.slots.size(), false);
      p.placeholder.back() = true;
    }
    p.fed.push_back(f);
  }
}

void ZipArVerifyStrategy::add_stale_slots(Plan& p) const {
  // Slots below the last query whose key/value were computed with another token than the
  // position's current one.
  const int64_t top = *std::max_element(p.slots.begin(), p.slots.end());
  for (int64_t sl = cls_; sl < top && static_cast<int64_t>(p.slots.size()) < max_queries(W_); ++sl) {
    const int32_t tok = token_at(sl - cls_);
    if (tok < 0 || slot_fed_[static_cast<size_t>(sl)] == tok ||
        std::find(p.slots.begin(), p.slots.end(), sl) != p.slots.end())
      continue;
    p.slots.push_back(sl);
    p.predicts.push_back(0);
    p.fed.push_back(tok);
    p.placeholder.push_back(false);
  }
}

void ZipArVerifyStrategy::record(const Plan& pl, uint32_t round) {
  TargetSession& t = target();
  CommandStream& s = t.stream();
  const int64_t T = static_cast<int64_t>(pl.slots.size()), c = pl.c, D = pl.D, Vq = pl.verified;
  for (int64_t i = 0; i < T; ++i)
    slot_fed_[static_cast<size_t>(pl.slots[static_cast<size_t>(i)])] =
        pl.placeholder[static_cast<size_t>(i)] ? kPlaceholder : pl.fed[static_cast<size_t>(i)];
  auto valid = [&](int64_t sl) {
    const int32_t f = slot_fed_[static_cast<size_t>(sl)];
    if (sl < cls_) return f == kCondition;
    return f >= 0 && f == token_at(sl - cls_);
  };
  std::vector<uint32_t> tokens, pos(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i) {
    if (pl.fed[static_cast<size_t>(i)] != kCondition)
      tokens.push_back(static_cast<uint32_t>(pl.fed[static_cast<size_t>(i)]));
    pos[static_cast<size_t>(i)] = static_cast<uint32_t>(pl.predicts[static_cast<size_t>(i)]);
  }
  const GptBatch& batch = t.at_positions(pl.slots, tokens, [&](int64_t, int64_t sl) { return valid(sl); });
  t.ctx().upload(positions_, 0, pos.data(), pos.size() * 4);
  std::vector<uint32_t> verified(static_cast<size_t>(Vq), ops::kNoToken);
  for (int64_t i = 0; i < D; ++i)
    verified[static_cast<size_t>(i)] = static_cast<uint32_t>(draft_[static_cast<size_t>(c + i)]);
  t.ctx().upload(row_tokens_, 0, verified.data(), verified.size() * 4);

  const int64_t max_q = p_.shape()[0];
  const TensorView flat = out_.view().reshape({3 * max_q});
  const TensorView acc = flat.rows(0, Vq), resolved = flat.rows(max_q, Vq), fresh = flat.rows(2 * max_q, T);
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Draft, round));
  ops::sampler(s, out.logits, positions_.view().rows(0, T), sp, p_.view().rows(0, T), fresh);
  if (Vq > D) s.fill(q_.view().rows(c + D, 1), 0u);  // the row without a draft: residual = p
  const TensorView q_rows = q_.view().rows(c, Vq), drafts = row_tokens_.view().rows(0, Vq);
  accept_->record_resolution(s, {p_.view().rows(0, Vq), q_rows, drafts, positions_.view().rows(0, Vq), in_.seed, round},
                             acc, resolved);
  for (int64_t i = Vq; i < pl.sampled_end; ++i)
    s.copy(p_.view().rows(i, 1), q_.view().rows(pl.predicts[static_cast<size_t>(i)], 1));
}

void ZipArVerifyStrategy::commit(const Plan& pl, const std::vector<uint32_t>& res, StepEvent& e) {
  const int64_t N = image_tokens(), c = pl.c, D = pl.D, Vq = pl.verified, max_q = p_.shape()[0];
  int64_t j = 0;
  while (j < D && res[static_cast<size_t>(j)]) ++j;
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
    grid_[static_cast<size_t>(n)] = checked_token(res[static_cast<size_t>(max_q + j)], n);
    (rejected ? e.rejected : e.accepted).push_back(static_cast<int32_t>(n));
    if (rejected) e.resampled.push_back(static_cast<int32_t>(n));
  }
  const int64_t new_c = c + std::min(j + 1, Vq);
  for (int64_t n = c; n < new_c; ++n) draft_[static_cast<size_t>(n)] = kNone;
  if (rejected) {
    // Drafts after a rejected token may have seen it: all of them go.
    for (int64_t n = new_c; n < N; ++n) draft_[static_cast<size_t>(n)] = kNone;
  } else {
    for (int64_t i = Vq; i < pl.sampled_end; ++i) {
      const int64_t m = pl.predicts[static_cast<size_t>(i)];
      draft_[static_cast<size_t>(m)] = checked_token(res[static_cast<size_t>(2 * max_q + i)], m);
      e.proposed.push_back(static_cast<int32_t>(m));
      e.proposed_tokens.push_back(draft_[static_cast<size_t>(m)]);
    }
  }
  committed_ = new_c;
  ++nfe_;
}

void ZipArVerifyStrategy::decode(StepEvent& e) {
  const Plan p = plan();
  record(p, static_cast<uint32_t>(step_));
  target().submit_and_wait();
  std::vector<uint32_t> res(static_cast<size_t>(3 * p_.shape()[0]));
  target().ctx().download(out_, res.data(), res.size() * 4);
  commit(p, res, e);
}

}  // namespace vkspec
