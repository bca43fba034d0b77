#include "decoding/head_proposals.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/target_session.h"
#include "engine/model/draft_heads.h"
#include "engine/ops/philox.h"
#include "engine/ops/sampler.h"

namespace vkspec {
namespace {

DraftHeads& checked_heads(const ModelSet& models, const std::string& owner) {
  if (!models.heads) throw Error(owner + ": --init heads needs draft heads (--heads FILE, tools/train_draft_heads.py)");
  return *models.heads;
}

}  // namespace

HeadProposals::HeadProposals(const ModelSet& models, const std::string& owner, int64_t lanes, int64_t max_queries)
    : ctx_(*models.ctx),
      heads_(checked_heads(models, owner)),
      image_tokens_(models.target->config().image_tokens()),
      vocab_(models.target->config().vocab_size),
      grid_(models.target->config().grid_size),
      tokens_(static_cast<size_t>(lanes), std::vector<int32_t>(static_cast<size_t>(image_tokens_), -1)) {
  // A lane's step proposes each position at most once, through at most one head per window row.
  rows_per_lane_ = std::min(image_tokens_, static_cast<int64_t>(heads_.heads().size()) * max_queries);
  const int64_t rows = lanes * rows_per_lane_;
  table_ = ctx_.tensor(DType::F32, {lanes * image_tokens_, vocab_}, owner + " head proposals");
  probs_ = ctx_.tensor(DType::F32, {rows, vocab_}, owner + " head distributions");
  sampled_ = ctx_.tensor(DType::U32, {rows}, owner + " head tokens", MemoryUsage::Readback);
  positions_ = ctx_.tensor(DType::U32, {rows}, owner + " head positions", MemoryUsage::Upload);
  purposes_ = ctx_.tensor(DType::U32, {rows}, owner + " head purposes", MemoryUsage::Upload);
  seeds_ = ctx_.tensor(DType::U32, {rows, 2}, owner + " head seeds", MemoryUsage::Upload);
}

void HeadProposals::reset(size_t lane) { std::fill(tokens_[lane].begin(), tokens_[lane].end(), -1); }

TensorView HeadProposals::q_row(size_t lane, int64_t n) const {
  return table_.view().rows(static_cast<int64_t>(lane) * image_tokens_ + n, 1);
}

bool HeadProposals::take(size_t lane, int64_t n, const TensorView& q, std::vector<CopyRegion>& copies,
                         uint32_t& draft) const {
  if (token(lane, n) < 0) return false;
  draft = static_cast<uint32_t>(token(lane, n));
  copies.push_back({q_row(lane, n), q});
  return true;
}

std::vector<std::pair<int, int64_t>> HeadProposals::pick(const HeadStep& step) const {
  const int64_t N = image_tokens_, W = grid_;
  std::vector<std::pair<int, int64_t>> at(static_cast<size_t>(N), {-1, 0});
  std::vector<int64_t> best(static_cast<size_t>(N), N + 1);
  // Only proposals that can be read before a newer one replaces them: the heads' rows are most of
  // a step's cost. Past the window that is every position; inside it, only where redrafting may
  // read one (HeadStep::readable_inside).
  auto readable = [&](int64_t m) { return m >= step.c + step.q || (step.readable_inside && step.readable_inside(m)); };
  for (size_t k = 0; k < heads_.heads().size(); ++k) {
    const DraftHead& h = heads_.heads()[k];
    for (int64_t t = 0; t < step.q; ++t) {
      const int64_t from = step.c + t, m = from + h.offset;  // row t predicted `from`
      if (m >= N || (!h.vertical && from % W + h.offset >= W) || !readable(m)) continue;
      if (h.offset < best[static_cast<size_t>(m)]) {
        best[static_cast<size_t>(m)] = h.offset;
        at[static_cast<size_t>(m)] = {static_cast<int>(k), t};
      }
    }
  }
  return at;
}

std::vector<bool> HeadProposals::record(TargetSession& t, const TensorView& hidden, const std::vector<HeadStep>& steps,
                                        const SamplerSettings& sampler) {
  std::vector<bool> ran(steps.size(), false);
  std::vector<std::pair<int, int64_t>> rows;  // (head, window row) of each sampled row
  std::vector<uint32_t> positions, purposes;
  std::vector<uint64_t> seeds;
  pending_.clear();
  for (size_t k = 0; k < steps.size(); ++k) {
    const HeadStep& st = steps[k];
    if (st.q == 0) continue;
    const std::vector<std::pair<int, int64_t>> at = pick(st);
    for (int64_t m = 0; m < image_tokens_; ++m) {
      const auto [head, row] = at[static_cast<size_t>(m)];
      if (head < 0) continue;
      rows.push_back({head, row});
      positions.push_back(static_cast<uint32_t>(m));
      purposes.push_back(philox::purpose_word(philox::Purpose::DraftHead, st.round * 8u + static_cast<uint32_t>(head)));
      seeds.push_back(st.seed);
      pending_.push_back({k, m});
      ran[k] = true;
    }
  }
  if (pending_.empty()) return ran;
  const int64_t R = static_cast<int64_t>(pending_.size());
  // The logits as the sampler reads them (CfgLayout::Halves): every sampled row's conditional
  // hidden row, then (CFG) every null row in the same order.
  std::vector<std::pair<int, int64_t>> hidden_rows;
  const size_t B = steps[pending_[0].first].hidden_base.size();
  for (size_t b = 0; b < B; ++b)
    for (size_t i = 0; i < pending_.size(); ++i)
      hidden_rows.push_back({rows[i].first, steps[pending_[i].first].hidden_base[b] + rows[i].second});
  ctx_.upload(positions_, 0, positions.data(), positions.size() * 4);
  ctx_.upload(purposes_, 0, purposes.data(), purposes.size() * 4);
  ctx_.upload(seeds_, 0, seeds.data(), seeds.size() * 8);  // low word first, as the sampler reads
  CommandStream& s = t.stream();
  t.set_stage(stage::kHeads);
  const TensorView logits = heads_.logits_at(s, hidden, hidden_rows);
  t.set_stage(stage::kSampling);
  const ops::SamplerParams sp = sampler.op_params(vocab_, 0, ops::SampleMode::Categorical, 0);
  ops::sampler(s, logits, positions_.view().rows(0, R), sp, probs_.view().rows(0, R), sampled_.view().rows(0, R),
               purposes_.view().rows(0, R), seeds_.view().rows(0, R));
  std::vector<CopyRegion> spread;
  for (int64_t i = 0; i < R; ++i) {
    const auto [lane, m] = pending_[static_cast<size_t>(i)];
    spread.push_back({probs_.view().rows(i, 1), q_row(lane, m)});
  }
  s.copy(spread);
  return ran;
}

void HeadProposals::read() {
  if (pending_.empty()) return;
  std::vector<uint32_t> sampled(pending_.size());
  ctx_.download(sampled_, 0, sampled.data(), sampled.size() * 4);
  for (size_t i = 0; i < pending_.size(); ++i)
    tokens_[pending_[i].first][static_cast<size_t>(pending_[i].second)] = static_cast<int32_t>(sampled[i]);
  pending_.clear();
}

}  // namespace vkspec
