#include "decoding/window_batch_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/accept_rule.h"
#include "decoding/point_mass.h"
#include "decoding/speculative_base.h"
#include "engine/ops/det_math.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

// Rows of the step's read-back: acceptance, resolved token, fresh token, independent token.
constexpr int64_t kOutRows = 4;

}  // namespace

WindowBatchStrategy::WindowBatchStrategy(std::string method, const ModelSet& models,
                                         const std::vector<StrategyInputs>& in, DraftRule rule,
                                         const WindowOptions& opt, int64_t lanes)
    : LaneBatchStrategy(method, models, in, opt.window + 1, opt.window + 1, lanes),
      rule_(rule),
      opt_(opt),
      lanes_(static_cast<size_t>(lanes)) {
  const int64_t rows = lanes * (opt.window + 1);
  Context& ctx = *models.ctx;
  accept_ = bind_accept_rule(opt.accept, models, name(), rows);
  exact_successor_ = rule == DraftRule::Coupled && !accept_->descriptor().lossless;
  partial_ = rule != DraftRule::Fresh && opt.alpha < 1.0;
  for (Tensor& p : p_) p = ctx.tensor(DType::F32, {rows, vocab()}, name() + " target probabilities");
  q_ = ctx.tensor(DType::F32, {rows, vocab()}, name() + " draft distributions");
  positions_ = ctx.tensor(DType::U32, {rows}, name() + " row positions", MemoryUsage::Upload);
  drafts_ = ctx.tensor(DType::U32, {rows}, name() + " row drafts", MemoryUsage::Upload);
  rounds_ = ctx.tensor(DType::U32, {rows}, name() + " row rounds", MemoryUsage::Upload);
  purposes_ = ctx.tensor(DType::U32, {rows}, name() + " row purposes", MemoryUsage::Upload);
  seeds_ = ctx.tensor(DType::U32, {rows, 2}, name() + " row seeds", MemoryUsage::Upload);
  if (exact_successor_) exact_accept_ = ctx.tensor(DType::U32, {rows}, name() + " exact acceptance");
  out_ = ctx.tensor(DType::U32, {kOutRows, rows}, name() + " step results", MemoryUsage::Readback);
  if (opt.init == DraftInit::Heads) heads_ = std::make_unique<HeadProposals>(models, name(), lanes, opt.window + 1);
}

WindowBatchStrategy::~WindowBatchStrategy() = default;

void WindowBatchStrategy::start_lanes() {
  for (size_t k : admit()) {
    lanes_[k] = Lane{};
    lanes_[k].image = lane_image(k);
    lanes_[k].drafts.assign(static_cast<size_t>(image_tokens()), 0);
    if (heads_) heads_->reset(k);
  }
}

int64_t WindowBatchStrategy::plan() {
  int64_t T = 1;
  for (Lane& l : lanes_) {
    l.drafts_now = l.queries = 0;
    if (l.image < 0 || done(static_cast<size_t>(l.image))) continue;
    l.c = images_[static_cast<size_t>(l.image)].committed;
    l.drafts_now = std::min(opt_.window, image_tokens() - l.c);
    l.queries = l.drafts_now + (l.c + l.drafts_now < image_tokens() ? 1 : 0);
    T = std::max(T, l.queries);
  }
  return T;
}

uint32_t WindowBatchStrategy::token_at(const Lane& l, int64_t n) const {
  const Image& im = images_[static_cast<size_t>(l.image)];
  return n < im.committed ? static_cast<uint32_t>(im.grid[static_cast<size_t>(n)]) : l.drafts[static_cast<size_t>(n)];
}

void WindowBatchStrategy::record_q_rows(size_t lane, int64_t T, StepRows& rows) {
  Lane& l = lanes_[lane];
  CommandStream& s = target().stream();
  const int64_t first = static_cast<int64_t>(lane) * T, V = vocab(), W = models_.target->config().grid_size;
  const uint64_t seed = l.image >= 0 ? images_[static_cast<size_t>(l.image)].in.seed : 0;
  // Carried: positions drafted from the previous step's p, one contiguous run of its rows.
  const int64_t carried = std::max<int64_t>(0, std::min(l.ready, l.c + l.drafts_now) - l.c);
  if (carried > 0)
    s.copy(p_[1 - cur_].view().rows(l.p_row + (l.c - l.p_from), carried), q_.view().rows(first, carried));
  std::vector<CopyRegion> proposals;
  for (int64_t n = l.c + carried; n < l.c + l.drafts_now; ++n) {
    const int64_t row = first + (n - l.c);
    if (heads_ && heads_->take(lane, n, q_.view().rows(row, 1), proposals, l.drafts[static_cast<size_t>(n)])) continue;
    const InitialDraft d = initial_draft(opt_.init, seed, n, V, W, [&](int64_t m) { return token_at(l, m); });
    if (d.uniform)
      s.fill(q_.view().rows(row, 1), det::float_bits(1.0f / static_cast<float>(V)));
    else
      rows.point_masses.push_back({row, d.token});
    l.drafts[static_cast<size_t>(n)] = d.token;
  }
  s.copy(proposals);
  l.ready = std::max(l.ready, l.c + l.drafts_now);
  // The row without a draft (residual = p) and the padding rows: q = 0.
  if (T > l.drafts_now) s.fill(q_.view().rows(first + l.drafts_now, T - l.drafts_now), 0u);
  const uint32_t round = static_cast<uint32_t>(l.steps);
  for (int64_t t = 0; t < T; ++t) {
    const size_t r = static_cast<size_t>(first + t);
    rows.positions[r] = static_cast<uint32_t>(std::min(l.c + t, image_tokens() - 1));
    rows.drafts[r] = t < l.drafts_now ? l.drafts[static_cast<size_t>(l.c + t)] : ops::kNoToken;
    rows.rounds[r] = round;
    rows.purposes[r] = philox::purpose_word(philox::Purpose::Draft, round);
    rows.seeds[r] = seed;
  }
}

GptQueries WindowBatchStrategy::lane_queries(size_t lane, int64_t real, int64_t T) {
  const Lane& l = lanes_[lane];
  const TargetSession& t = target();
  GptQueries q;
  ops::AttentionMaskBuilder mb(T, t.cache().slots());
  for (int64_t i = 0; i < real; ++i) {
    const int64_t n = l.c + i, p = t.query_position(n);
    q.positions.push_back(p);
    q.slots.push_back(static_cast<uint32_t>(p));
    mb.see_prefix(i, p + 1);
    // Fed: token n - 1 (committed, or the draft), nothing at the condition's query.
    if (n > 0) q.tokens.push_back(token_at(l, n - 1));
  }
  return padded_lane_queries(lane, std::move(q), mb, real, T, 0);
}

void WindowBatchStrategy::upload_rows(const StepRows& rows) {
  Context& ctx = *models_.ctx;
  const size_t R = rows.positions.size();
  ctx.upload(positions_, 0, rows.positions.data(), R * 4);
  ctx.upload(drafts_, 0, rows.drafts.data(), R * 4);
  ctx.upload(rounds_, 0, rows.rounds.data(), R * 4);
  ctx.upload(purposes_, 0, rows.purposes.data(), R * 4);
  ctx.upload(seeds_, 0, rows.seeds.data(), R * 8);  // low word first, as the ops read
}

void WindowBatchStrategy::record_verification(int64_t R) {
  CommandStream& s = target().stream();
  const int64_t max_rows = q_.shape()[0];
  const TensorView out = out_.view().reshape({kOutRows * max_rows});
  const TensorView p = p_[cur_].view().rows(0, R), q = q_.view().rows(0, R), pos = positions_.view().rows(0, R);
  const ops::RowKeys keys{seeds_.view().rows(0, R), rounds_.view().rows(0, R)};
  JudgedRows judged{p, q, drafts_.view().rows(0, R), pos, 0, 0, keys};
  accept_->record_resolution(s, judged, out.rows(0, R), out.rows(max_rows, R));
  if (exact_successor_)
    record_exact_resolution(s, judged, p, exact_accept_.view().rows(0, R), out.rows(2 * max_rows, R));
  // The residual norm(max(p - p, 0)) is all zero: spec_residual_sample draws from p itself.
  if (partial_)
    ops::spec_residual_sample(s, p, p, pos, {0, philox::purpose_word(philox::Purpose::Draft), keys},
                              out.rows(3 * max_rows, R));
}

void WindowBatchStrategy::commit_lane(size_t lane, int64_t T, const std::vector<uint32_t>& out, StepEvent& e) {
  Lane& l = lanes_[lane];
  Image& im = images_[static_cast<size_t>(l.image)];
  const int64_t first = static_cast<int64_t>(lane) * T, Q = l.queries, max_rows = q_.shape()[0];
  auto row = [&](int64_t k) {
    const auto from = out.begin() + k * max_rows + first;
    return std::vector<uint32_t>(from, from + Q);
  };
  const std::vector<uint32_t> accept = row(0), resolved = row(1), fresh = row(2), independent = row(3);
  const std::vector<uint32_t> window(l.drafts.begin() + l.c, l.drafts.begin() + l.c + l.drafts_now);
  const size_t image = static_cast<size_t>(l.image);
  const int64_t j = commit_verified_rows(
      e, im.grid, {l.c, Q, window, accept, resolved},
      [&](uint32_t token, int64_t n) { return checked_token(token, image, n); }, name());
  im.committed = l.c + std::min(j + 1, Q);
  ++im.nfe;
  const uint32_t round = static_cast<uint32_t>(l.steps);
  for (int64_t t = j + 1; t < Q; ++t) {
    const size_t r = static_cast<size_t>(t);
    l.drafts[static_cast<size_t>(l.c + t)] = next_window_draft(opt_, rule_, exact_successor_, im.in.seed, l.c + t,
                                                               round, {resolved[r], fresh[r], independent[r]});
  }
  l.ready = l.c + Q;
  l.p_row = first;
  l.p_from = l.c;
  ++l.steps;
}

void WindowBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  start_lanes();
  const int64_t T = plan(), L = static_cast<int64_t>(lanes_.size()), R = L * T;
  TargetSession& t = target();
  StepRows rows{std::vector<uint32_t>(static_cast<size_t>(R)), std::vector<uint32_t>(static_cast<size_t>(R)),
                std::vector<uint32_t>(static_cast<size_t>(R)), std::vector<uint32_t>(static_cast<size_t>(R)),
                std::vector<uint64_t>(static_cast<size_t>(R))};
  std::vector<GptQueries> queries;
  for (size_t k = 0; k < lanes_.size(); ++k) {
    record_q_rows(k, T, rows);
    queries.push_back(lane_queries(k, lanes_[k].queries, T));
  }
  record_point_masses(t.stream(), q_, rows.point_masses);  // every lane's in one zeroing pass
  upload_rows(rows);
  const GptOutputs fwd = t.forward(t.batch(GptQueries::ragged(queries)));
  const StrategyInputs& in = images_[0].in;  // the settings every image shares (batch_strategy.cpp)
  ops::SampleMode mode = ops::SampleMode::None;
  if (rule_ == DraftRule::Fresh) mode = ops::SampleMode::Categorical;
  if (rule_ == DraftRule::SharedGumbel) mode = ops::SampleMode::GumbelMax;
  const ops::SamplerParams sp =
      in.sampler.op_params(vocab(), 0, mode, philox::purpose_word(philox::Purpose::DraftGumbel));
  const int64_t max_rows = q_.shape()[0];
  const bool draws = mode != ops::SampleMode::None;
  ops::sampler(t.stream(), fwd.logits, positions_.view().rows(0, R), sp, p_[cur_].view().rows(0, R),
               draws ? out_.view().reshape({kOutRows * max_rows}).rows(2 * max_rows, R) : TensorView{},
               rule_ == DraftRule::Fresh ? purposes_.view().rows(0, R) : TensorView{},
               draws ? seeds_.view().rows(0, R) : TensorView{});
  record_verification(R);
  const std::vector<bool> heads_ran = heads_ ? record_heads(fwd.hidden, T) : std::vector<bool>(lanes_.size(), false);
  t.submit_and_wait();
  if (heads_) heads_->read();
  std::vector<uint32_t> out(static_cast<size_t>(kOutRows * max_rows));
  models_.ctx->download(out_, out.data(), out.size() * 4);
  for (size_t k = 0; k < lanes_.size(); ++k) {
    if (lanes_[k].queries == 0) continue;
    const size_t image = static_cast<size_t>(lanes_[k].image);
    commit_lane(k, T, out, events[image]);
    if (heads_ran[k]) ++images_[image].head_forwards;
    advanced[image] = true;
  }
  cur_ = 1 - cur_;
}

std::vector<bool> WindowBatchStrategy::record_heads(const TensorView& hidden, int64_t T) {
  const int64_t L = static_cast<int64_t>(lanes_.size()), rows_per_image = hidden.shape[0] / (L * T);
  std::vector<HeadStep> steps(lanes_.size());
  for (size_t k = 0; k < lanes_.size(); ++k) {
    const Lane& l = lanes_[k];
    if (l.queries == 0) continue;  // no image, or its image is done: steps[k].q stays 0
    HeadStep& h = steps[k];
    h.c = l.c;
    h.q = l.queries;
    // Batch row b serves lane b % L (GptQueries::ragged): the conditional rows, then the null rows.
    for (int64_t b = 0; b < rows_per_image; ++b) h.hidden_base.push_back((b * L + static_cast<int64_t>(k)) * T);
    h.seed = images_[static_cast<size_t>(l.image)].in.seed;
    h.round = static_cast<uint32_t>(l.steps);
  }
  return heads_->record(target(), hidden, steps, images_[0].in.sampler);
}

}  // namespace vkspec
