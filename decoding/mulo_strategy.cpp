#include "decoding/mulo_strategy.h"

#include <algorithm>
#include <numeric>

#include "decoding/islands.h"
#include "decoding/neighbour_options.h"
#include "decoding/point_mass.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {
namespace {

// slot_fed_ markers: never fed, fed the condition, fed a token whose key and value were computed
// under a context that later changed (re-fed in the next verification).
constexpr int32_t kNotFed = -1, kConditionFed = -2, kStaleContext = -3;

const ModelSet& checked(const ModelSet& m) {
  if (!m.target) return m;  // Strategy's constructor names this error
  if (!m.low_res) throw Error("mulo: needs the low-resolution model (--low-res FILE, a GPT on a narrower grid)");
  if (!m.tokenizer) throw Error("mulo: needs the tokenizer (--vq FILE) for its pixel-space upsampler");
  const GptConfig &t = m.target->config(), &l = m.low_res->config();
  if (l.vocab_size != t.vocab_size || l.num_classes != t.num_classes || l.cls_token_num != t.cls_token_num)
    throw Error("mulo: low-resolution model " + m.low_res->path() + " (vocab " + std::to_string(l.vocab_size) +
                ", classes " + std::to_string(l.num_classes) + ") must share the target's vocabulary and classes " +
                "(target " + m.target->path() + ": vocab " + std::to_string(t.vocab_size) + ", classes " +
                std::to_string(t.num_classes) + ")");
  const int64_t r = t.grid_size / l.grid_size;
  if (t.grid_size % l.grid_size != 0 || r < 2 || (r & (r - 1)) != 0)
    throw Error("mulo: the target's grid (" + std::to_string(t.grid_size) + " tokens, " + m.target->path() +
                ") must be r = 2, 4, 8, ... times the low-resolution model's (" + std::to_string(l.grid_size) +
                " tokens, " + m.low_res->path() + "): ratio " + std::to_string(t.grid_size) + " / " +
                std::to_string(l.grid_size) +
                (t.grid_size % l.grid_size ? " is not a whole number" : " is not a power of two >= 2"));
  if (m.tokenizer->codebook_size() != t.vocab_size)
    throw Error("mulo: tokenizer " + m.tokenizer->path() + " has " + std::to_string(m.tokenizer->codebook_size()) +
                " codes, the target's vocabulary is " + std::to_string(t.vocab_size));
  return m;
}

}  // namespace

int64_t mulo_max_queries(int64_t band, int64_t ratio, int64_t grid) { return 2 * ratio * band * grid; }

MuloOptions parse_mulo_options(const OptionValues& o, const ModelSet& m) {
  checked(m);
  MuloOptions r;
  r.tau = o.number("tau");
  r.metric = neighbour_metric_of(o);
  r.k = std::min(o.integer("k"), neighbour_table(m, r.metric, "mulo").k_max());
  r.radius = o.integer_at_most("radius", m.target->config().grid_size, o.integer("radius"));
  r.band = o.integer_at_most("band", m.low_res->config().grid_size, o.integer("band"));
  r.sequential = o.choice("islands") == "sequential";
  r.coupled = o.choice("resample") == "coupled";
  r.upsampler = upsampler_kind(o.choice("upsampler"));
  r.raster = o.choice("backtrack") == "raster";
  r.ratio = m.target->config().grid_size / m.low_res->config().grid_size;
  if (o.choice("parallel") == "zipar")
    r.zipar_window = o.integer("zipar-window");
  else if (o.given("zipar-window"))
    throw Error("mulo: --zipar-window applies to --parallel zipar");
  if (r.raster)
    for (const char* key : {"radius", "islands", "resample"})
      if (o.given(key))
        throw Error(std::string("mulo: --") + key +
                    " applies to --backtrack local (raster backtracking has no islands)");
  if (r.coupled && o.given("islands"))
    throw Error("mulo: --islands applies to the fresh resampling waves, not to --resample coupled");
  if (r.band * m.low_res->config().grid_size > m.low_res->options().max_queries)
    throw Error("mulo: a band of " + std::to_string(r.band) + " low-resolution rows needs " +
                std::to_string(r.band * m.low_res->config().grid_size) + " queries per low-resolution forward; " +
                m.low_res->path() + " was loaded for " + std::to_string(m.low_res->options().max_queries) +
                " (GptOptions::max_queries)");
  return r;
}

MuloStrategy::MuloStrategy(const ModelSet& models, const StrategyInputs& in, const MuloOptions& opt)
    : Strategy("mulo", checked(models), in, mulo_max_queries(opt.band, opt.ratio, models.target->config().grid_size)),
      tau_(opt.tau),
      k_(opt.k),
      radius_(opt.radius),
      band_rows_(opt.band),
      table_(&neighbour_table(models, opt.metric, "mulo")),
      sequential_(opt.sequential),
      coupled_(opt.coupled),
      raster_(opt.raster),
      zipar_window_(opt.zipar_window),
      ratio_(opt.ratio),
      W_(models.target->config().grid_size),
      w_(models.low_res->config().grid_size),
      cls_(models.target->config().cls_token_num),
      drafter_(target(), *models.low_res, opt.band, opt.zipar_window),
      resampler_(*models.ctx, *models.tokenizer, models.low_res->config().grid_size, opt.ratio),
      upsampler_(make_draft_upsampler(opt.upsampler, models, resampler_, w_, W_)) {
  if (W_ != ratio_ * w_) throw Error("mulo: the options' resolution ratio does not match the models");
  const int64_t max_q = mulo_max_queries(band_rows_, ratio_, W_);
  const int64_t N = image_tokens(), n = w_ * w_, V = models.target->config().vocab_size;
  Context& ctx = *models.ctx;
  drafts_.assign(static_cast<size_t>(N), kUndecided);
  slot_fed_.assign(static_cast<size_t>(target().cache().slots()), kNotFed);
  std::fill(slot_fed_.begin(), slot_fed_.begin() + (cls_ - 1), kConditionFed);  // prefilled (TargetSession)
  hi_grid_ = ctx.tensor(DType::U32, {N}, "mulo committed grid", MemoryUsage::Upload);
  lo_derived_ = ctx.tensor(DType::U32, {n}, "mulo low-resolution prefix");
  hi_draft_ = ctx.tensor(DType::U32, {N}, "mulo drafts");
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "mulo target probabilities");
  positions_ = ctx.tensor(DType::U32, {max_q}, "mulo sample positions", MemoryUsage::Upload);
  out_tokens_ = ctx.tensor(DType::U32, {max_q}, "mulo resampled tokens", MemoryUsage::Readback);
  pooled_ = ctx.tensor(DType::F32, {max_q}, "mulo pooled probabilities", MemoryUsage::Readback);
  draft_back_ = ctx.tensor(DType::U32, {max_q}, "mulo drafts read back", MemoryUsage::Readback);
  if (coupled_) {
    pending_.assign(static_cast<size_t>(N), 0);
    q_ = ctx.tensor(DType::F32, {N, V}, "mulo draft distributions");
    row_drafts_ = ctx.tensor(DType::U32, {max_q}, "mulo row drafts", MemoryUsage::Upload);
    accept_back_ = ctx.tensor(DType::U32, {max_q}, "mulo acceptance read back", MemoryUsage::Readback);
  }
}

bool MuloStrategy::slot_valid(int64_t s) const {
  const int32_t fed = slot_fed_[static_cast<size_t>(s)];
  if (s < cls_) return fed == kConditionFed;
  const int32_t final_token = grid_[static_cast<size_t>(s - cls_)];
  return final_token != kUndecided && fed == final_token;
}

std::vector<int64_t> MuloStrategy::stale_slots(int64_t end) const {
  std::vector<int64_t> out;
  for (int64_t s = cls_; s < end; ++s) {
    const int32_t fed = slot_fed_[static_cast<size_t>(s)], tok = grid_[static_cast<size_t>(s - cls_)];
    if (tok != kUndecided && fed != kNotFed && fed != tok) out.push_back(s);
  }
  return out;
}

void MuloStrategy::record_band_drafts(int64_t row, int64_t low_rows, int64_t prev_row, uint32_t round) {
  CommandStream& s = target().stream();
  const TensorView lo_grid = drafter_.grid().view();
  const int64_t R = ratio_ * row;  // high rows before the band's
  // The low-resolution prefix from the committed high-resolution rows (undecided rows repeat the
  // last committed one, so the decoder sees no made-up content below the prefix).
  target().set_stage(stage::kLowRes);  // the pixel path is part of low-resolution drafting
  if (row > 0) {
    std::vector<uint32_t> host(static_cast<size_t>(image_tokens()));
    for (int64_t r = 0; r < W_; ++r)
      for (int64_t c = 0; c < W_; ++c)
        host[static_cast<size_t>(r * W_ + c)] =
            static_cast<uint32_t>(grid_[static_cast<size_t>(std::min(r, R - 1) * W_ + c)]);
    target().ctx().upload(hi_grid_, 0, host.data(), host.size() * 4);
    resampler_.record_down(s, hi_grid_.view(), lo_derived_.view());
    s.copy(lo_derived_.view().rows(0, row * w_), lo_grid.rows(0, row * w_));
  }
  draft_forwards_ += drafter_.record_band(in_, lo_derived_.view(), row, low_rows, prev_row, round);
  // Rows below the band repeat its last row for the decoder.
  const int64_t last = (row + low_rows - 1) * w_;
  target().set_stage(stage::kLowRes);
  for (int64_t r = row + low_rows; r < w_; ++r) s.copy(lo_grid.rows(last, w_), lo_grid.rows(r * w_, w_));
  upsampler_->record_up(s, lo_grid, hi_draft_.view());
  target().set_stage(stage::kSampling);
}

void MuloStrategy::record_band_verification(int64_t first, int64_t Q, bool sample) {
  TargetSession& t = target();
  CommandStream& s = t.stream();
  // Queries predicting [first, first + Q), fed the last committed token (the condition at
  // first = 0) and the drafts; then the previous band's stale slots.
  const std::vector<int64_t> repairs = stale_slots(cls_ + first - 1);
  std::vector<int64_t> slots;
  std::vector<uint32_t> fed;
  for (int64_t i = 0; i < Q; ++i) slots.push_back(cls_ + first - 1 + i);
  if (first > 0) fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(first - 1)]));
  fed.resize(fed.size() + static_cast<size_t>(Q - 1), 0u);
  for (int64_t r : repairs) {
    slots.push_back(r);
    fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(r - cls_)]));
    slot_fed_[static_cast<size_t>(r)] = grid_[static_cast<size_t>(r - cls_)];
  }
  if (first == 0) slot_fed_[static_cast<size_t>(cls_ - 1)] = kConditionFed;
  const int64_t draft_from = cls_ + first - 1;
  auto sees = [&](int64_t i, int64_t slot) { return slot_valid(slot) || (i < Q && slot >= draft_from); };
  const GptBatch& batch = t.at_positions(slots, fed, sees);
  if (Q > 1) s.copy(hi_draft_.view().rows(first, Q - 1), batch.token_ids().rows(first > 0 ? 1 : 0, Q - 1));
  const int64_t T = static_cast<int64_t>(slots.size());
  const GptOutputs out = t.forward(batch);
  if (sample) {
    // Raster backtracking: each query's own sample, keyed like ar's, for the first rejection.
    if (T != Q) throw Error("mulo: raster backtracking left a stale slot before the frontier");
    const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                        philox::purpose_word(philox::Purpose::Sample));
    ops::sampler(s, out.logits, t.positions(first, Q), sp, probs_.view().rows(0, T), out_tokens_.view().rows(0, T));
  } else {
    const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
    ops::sampler(s, out.logits, {}, sp, probs_.view().rows(0, T), {});
  }
  ops::pooled_prob(s, probs_.view().rows(0, Q), hi_draft_.view().rows(first, Q), table_->table().view(),
                   static_cast<uint32_t>(k_), pooled_.view().rows(0, Q));
  s.copy(hi_draft_.view().rows(first, Q), draft_back_.view().rows(0, Q));
}

void MuloStrategy::commit_band(int64_t first, int64_t Q, StepEvent& e) {
  std::vector<float> pooled(static_cast<size_t>(Q));
  std::vector<uint32_t> drafts(static_cast<size_t>(Q));
  target().ctx().download(pooled_, 0, pooled.data(), pooled.size() * 4);
  target().ctx().download(draft_back_, 0, drafts.data(), drafts.size() * 4);
  std::vector<int32_t> rejected;
  for (int64_t t = 0; t < Q; ++t) {
    const int32_t n = static_cast<int32_t>(first + t);
    if (drafts[static_cast<size_t>(t)] >= static_cast<uint32_t>(vocab()))
      throw Error("mulo: the upsampler produced token " + std::to_string(drafts[static_cast<size_t>(t)]) +
                  " outside the vocabulary");
    drafts_[static_cast<size_t>(n)] = static_cast<int32_t>(drafts[static_cast<size_t>(t)]);
    e.proposed.push_back(n);
    e.proposed_tokens.push_back(drafts_[static_cast<size_t>(n)]);
    if (!(pooled[static_cast<size_t>(t)] >= tau_)) rejected.push_back(n);
  }
  islands_ = rejection_islands(rejected, W_, radius_, first, first + Q);
  std::vector<uint8_t> in_island(static_cast<size_t>(Q), 0);
  for (const auto& island : islands_)
    for (int32_t n : island) in_island[static_cast<size_t>(n - first)] = 1;
  for (int64_t t = 0; t < Q; ++t) {
    const int64_t n = first + t;
    if (t > 0) slot_fed_[static_cast<size_t>(cls_ + n - 1)] = drafts_[static_cast<size_t>(n - 1)];
    if (in_island[static_cast<size_t>(t)]) continue;
    grid_[static_cast<size_t>(n)] = drafts_[static_cast<size_t>(n)];
    e.accepted.push_back(static_cast<int32_t>(n));
  }
  if (first > 0) slot_fed_[static_cast<size_t>(cls_ + first - 1)] = grid_[static_cast<size_t>(first - 1)];
  e.rejected = rejected;
  e.islands = islands_;
  committed_ += static_cast<int64_t>(e.accepted.size());
  ++nfe_;
}

void MuloStrategy::band_step(StepEvent& e) {
  const int64_t row = band_ * band_rows_, low_rows = std::min(band_rows_, w_ - row);
  const int64_t first = ratio_ * row * W_, Q = ratio_ * low_rows * W_;
  record_band_drafts(row, low_rows, prev_row_, 0);
  prev_row_ = row;
  record_band_verification(first, Q);
  target().submit_and_wait();
  commit_band(first, Q, e);
  if (coupled_) {
    // The islands' positions become the drafts of coupled decoding, each a point mass on its
    // upsampled draft (filled with the next step's commands).
    std::vector<std::pair<int64_t, uint32_t>> point_mass;
    for (const auto& island : islands_)
      for (int32_t n : island) {
        pending_[static_cast<size_t>(n)] = 1;
        point_mass.push_back({n, static_cast<uint32_t>(drafts_[static_cast<size_t>(n)])});
      }
    record_point_masses(target().stream(), q_, point_mass);
    pending_count_ = static_cast<int64_t>(point_mass.size());
    islands_.clear();
    if (pending_count_ == 0) ++band_;
    return;
  }
  if (islands_.empty()) ++band_;
}

void MuloStrategy::raster_step(StepEvent& e) {
  const int64_t N = image_tokens();
  int64_t u = 0;  // the frontier: everything before it is final
  while (grid_[static_cast<size_t>(u)] != kUndecided) ++u;
  const int64_t row = (u / W_) / ratio_, low_rows = std::min(band_rows_, w_ - row);
  const int64_t Q = std::min<int64_t>(N, ratio_ * (row + low_rows) * W_) - u;
  // A band redrafted after a rejection inside it takes fresh draws (the low-resolution model's
  // context is the same: with the same numbers it would repeat its draft).
  redrafts_ = row == raster_row_ ? redrafts_ + 1 : 0;
  raster_row_ = row;
  record_band_drafts(row, low_rows, prev_row_, static_cast<uint32_t>(redrafts_));
  prev_row_ = row;
  record_band_verification(u, Q, true);
  target().submit_and_wait();
  std::vector<float> pooled(static_cast<size_t>(Q));
  std::vector<uint32_t> drafts(static_cast<size_t>(Q)), sampled(static_cast<size_t>(Q));
  target().ctx().download(pooled_, 0, pooled.data(), pooled.size() * 4);
  target().ctx().download(draft_back_, 0, drafts.data(), drafts.size() * 4);
  target().ctx().download(out_tokens_, 0, sampled.data(), sampled.size() * 4);
  for (int64_t t = 0; t < Q; ++t) {
    const int64_t n = u + t;
    drafts_[static_cast<size_t>(n)] = checked_token(drafts[static_cast<size_t>(t)], n);
    e.proposed.push_back(static_cast<int32_t>(n));
    e.proposed_tokens.push_back(drafts_[static_cast<size_t>(n)]);
    if (t > 0) slot_fed_[static_cast<size_t>(cls_ + n - 1)] = drafts_[static_cast<size_t>(n - 1)];
  }
  if (u > 0) slot_fed_[static_cast<size_t>(cls_ + u - 1)] = grid_[static_cast<size_t>(u - 1)];
  // Accept up to the first rejection, which takes the target's own sample; the rest is dropped.
  for (int64_t t = 0; t < Q; ++t) {
    const int32_t n = static_cast<int32_t>(u + t);
    ++committed_;
    if (pooled[static_cast<size_t>(t)] >= tau_) {
      grid_[static_cast<size_t>(n)] = drafts_[static_cast<size_t>(n)];
      e.accepted.push_back(n);
      continue;
    }
    grid_[static_cast<size_t>(n)] = checked_token(sampled[static_cast<size_t>(t)], n);
    e.rejected.push_back(n);
    e.resampled.push_back(n);
    break;
  }
  ++nfe_;
}

int64_t MuloStrategy::record_coupled_forward(int64_t u, int64_t band_end) {
  TargetSession& t = target();
  CommandStream& s = t.stream();
  // Rows resolved after the previous forward's first rejection take that forward's p as their q.
  std::vector<CopyRegion> requeue;
  for (int64_t n : requeue_) requeue.push_back({probs_.view().rows(n - requeue_first_, 1), q_.view().rows(n, 1)});
  s.copy(requeue);
  requeue_.clear();

  // Queries predicting u .. band_end - 1, fed the token before each (final, or its current
  // draft): causal over the final prefix and the band's suffix, all of it recomputed.
  const int64_t T = band_end - u;
  std::vector<uint32_t> fed, row_draft(static_cast<size_t>(T)), pos(static_cast<size_t>(T));
  auto token_at = [&](int64_t n) {
    return static_cast<uint32_t>(pending_[static_cast<size_t>(n)] ? drafts_[static_cast<size_t>(n)]
                                                                  : grid_[static_cast<size_t>(n)]);
  };
  for (int64_t i = 0; i < T; ++i) {
    const int64_t n = u + i;
    if (n > 0) {
      fed.push_back(token_at(n - 1));
      slot_fed_[static_cast<size_t>(cls_ + n - 1)] = static_cast<int32_t>(fed.back());
    } else {
      slot_fed_[static_cast<size_t>(cls_ - 1)] = kConditionFed;
    }
    row_draft[static_cast<size_t>(i)] = token_at(n);
    pos[static_cast<size_t>(i)] = static_cast<uint32_t>(n);
  }
  const GptBatch& batch = t.causal(u, T, fed);
  t.ctx().upload(positions_, 0, pos.data(), pos.size() * 4);
  t.ctx().upload(row_drafts_, 0, row_draft.data(), row_draft.size() * 4);
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(s, out.logits, {}, sp, probs_.view().rows(0, T), {});
  const uint32_t round = static_cast<uint32_t>(step_);
  const TensorView p = probs_.view().rows(0, T), q = q_.view().rows(u, T), d = row_drafts_.view().rows(0, T),
                   at = positions_.view().rows(0, T), acc = accept_back_.view().rows(0, T);
  ops::spec_accept(s, p, q, d, at, {in_.seed, philox::purpose_word(philox::Purpose::Accept, round)}, acc);
  ops::spec_residual_sample(s, p, q, at, {in_.seed, philox::purpose_word(philox::Purpose::Residual, round)},
                            out_tokens_.view().rows(0, T), acc, d);
  return T;
}

void MuloStrategy::coupled_step(StepEvent& e) {
  const int64_t band_end = std::min<int64_t>(image_tokens(), (ratio_ * (band_ + 1) * band_rows_) * W_);
  // The first position to predict: after a rejection, the one after it, since the keys and values
  // from there on were computed next to the replaced draft; else the first undecided one (what
  // comes before it was verified with exactly its final tokens).
  int64_t u = resume_;
  if (u < 0)
    for (u = 0; !pending_[static_cast<size_t>(u)];) ++u;
  const int64_t T = record_coupled_forward(u, band_end);
  target().submit_and_wait();
  std::vector<uint32_t> accept(static_cast<size_t>(T)), resolved(static_cast<size_t>(T));
  target().ctx().download(accept_back_, 0, accept.data(), accept.size() * 4);
  target().ctx().download(out_tokens_, 0, resolved.data(), resolved.size() * 4);

  // Commit in raster order up to and including the first rejection; island positions after it
  // take their resolution (an exact sample of this forward's p) as the next draft.
  int64_t stop = -1;  // the first rejected position
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = u + t;
    if (!pending_[static_cast<size_t>(n)]) continue;
    const int32_t tok = checked_token(resolved[static_cast<size_t>(t)], n);
    if (stop >= 0) {
      drafts_[static_cast<size_t>(n)] = tok;
      requeue_.push_back(n);
      continue;
    }
    e.proposed.push_back(static_cast<int32_t>(n));
    e.proposed_tokens.push_back(drafts_[static_cast<size_t>(n)]);
    grid_[static_cast<size_t>(n)] = tok;
    pending_[static_cast<size_t>(n)] = 0;
    --pending_count_;
    ++committed_;
    if (accept[static_cast<size_t>(t)]) {
      e.accepted.push_back(static_cast<int32_t>(n));
    } else {
      e.rejected.push_back(static_cast<int32_t>(n));
      e.resampled.push_back(static_cast<int32_t>(n));
      stop = n;
    }
  }
  requeue_first_ = u;
  resume_ = stop >= 0 ? stop + 1 : -1;
  ++nfe_;
  if (pending_count_ == 0) {
    // The band is final. Slots after a last-moment replacement were computed next to the old
    // token: the next verification re-feeds them.
    if (stop >= 0)
      for (int64_t n = stop; n + 1 < band_end; ++n) slot_fed_[static_cast<size_t>(cls_ + n)] = kStaleContext;
    resume_ = -1;
    ++band_;
  }
}

void MuloStrategy::wave_step(StepEvent& e) {
  TargetSession& t = target();
  // The next position of every island (the condition query first, should position 0 be one),
  // then slots to repair.
  // Islands are kept in raster order of their fronts: the first is the one sequential mode takes.
  std::sort(islands_.begin(), islands_.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  const size_t waving = sequential_ ? 1 : islands_.size();
  std::vector<int32_t> heads;
  for (size_t i = 0; i < waving; ++i) {
    if (zipar_window_ > 0 && !sequential_) {
      // ZipAR inside the island: every position whose part of the row above is far enough ahead.
      for (int32_t n : island_ready_positions(islands_[i], W_, zipar_window_)) heads.push_back(n);
    } else {
      heads.push_back(islands_[i].front());
    }
  }
  const int64_t band_end = std::min<int64_t>(image_tokens(), (ratio_ * (band_ + 1) * band_rows_) * W_);
  std::vector<int64_t> slots;
  std::vector<uint32_t> fed, pos;
  for (int32_t n : heads) {
    slots.push_back(cls_ + n - 1);
    pos.push_back(static_cast<uint32_t>(n));
    if (n == 0) {
      slot_fed_[static_cast<size_t>(cls_ - 1)] = kConditionFed;
      continue;
    }
    const int32_t prev = grid_[static_cast<size_t>(n - 1)] != kUndecided ? grid_[static_cast<size_t>(n - 1)]
                                                                         : drafts_[static_cast<size_t>(n - 1)];
    fed.push_back(static_cast<uint32_t>(prev));
    slot_fed_[static_cast<size_t>(cls_ + n - 1)] = prev;
  }
  for (int64_t r : stale_slots(cls_ + band_end - 1)) {
    if (std::find(slots.begin(), slots.end(), r) != slots.end()) continue;
    slots.push_back(r);
    pos.push_back(0);
    fed.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(r - cls_)]));
    slot_fed_[static_cast<size_t>(r)] = grid_[static_cast<size_t>(r - cls_)];
  }
  const int64_t T = static_cast<int64_t>(slots.size());
  const GptBatch& batch = t.at_positions(slots, fed, [&](int64_t, int64_t slot) { return slot_valid(slot); });
  t.ctx().upload(positions_, 0, pos.data(), pos.size() * 4);
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                      philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(t.stream(), out.logits, positions_.view().rows(0, T), sp, probs_.view().rows(0, T),
               out_tokens_.view().rows(0, T));
  t.submit_and_wait();
  std::vector<uint32_t> toks(static_cast<size_t>(T));
  t.ctx().download(out_tokens_, 0, toks.data(), toks.size() * 4);

  for (size_t i = 0; i < heads.size(); ++i) {
    const int32_t n = heads[i];
    grid_[static_cast<size_t>(n)] = checked_token(toks[i], n);
    e.proposed.push_back(n);
    e.proposed_tokens.push_back(static_cast<int32_t>(toks[i]));
    e.resampled.push_back(n);
  }
  for (size_t i = 0; i < waving; ++i)
    islands_[i].erase(std::remove_if(islands_[i].begin(), islands_[i].end(),
                                     [&](int32_t n) { return grid_[static_cast<size_t>(n)] != kUndecided; }),
                      islands_[i].end());
  islands_.erase(std::remove_if(islands_.begin(), islands_.end(), [](const auto& i) { return i.empty(); }),
                 islands_.end());
  committed_ += static_cast<int64_t>(heads.size());
  ++nfe_;
  if (islands_.empty()) ++band_;
}

void MuloStrategy::decode(StepEvent& e) {
  if (raster_)
    raster_step(e);
  else if (pending_count_ > 0)
    coupled_step(e);
  else if (islands_.empty())
    band_step(e);
  else
    wave_step(e);
}

namespace {

StrategyDescriptor mulo() {
  StrategyDescriptor d;
  d.name = "mulo";
  d.order = 70;
  d.summary = "MuLo-SD: a low-resolution model drafts, rejected tokens grow into islands resampled together";
  d.reference = "MuLo-SD, CVPR 2026 (multi-scale local speculative decoding); --upsampler nearest (default), "
                "--islands sequential and --resample coupled are ours, --upsampler pixel-sr|latent the paper's "
                "(docs/methods.md)";
  d.options = {
      OptionSpec::number("tau", 0.05, 0.0, 1.0, "acceptance threshold on the pooled target probability"),
      OptionSpec::integer("k", 8, 1, 65536, "nearest codebook entries pooled (clamped to the table)"),
      neighbour_metric_spec(),
      OptionSpec::integer("radius", 1, 0, 1 << 20, "rejections grow to their (2 radius + 1)^2 neighbourhood"),
      OptionSpec::integer("band", 1, 1, 1 << 20, "low-resolution rows drafted and verified per band"),
      OptionSpec::choice("islands", "concurrent", {"concurrent", "sequential"},
                         "resample the islands in concurrent waves (the paper) or one after another"),
      OptionSpec::choice("resample", "fresh", {"fresh", "coupled"},
                         "islands resampled by fresh waves or by coupled speculative decoding (ours)"),
      OptionSpec::choice("upsampler", "nearest", {"nearest", "pixel-sr", "latent"},
                         "low-res drafts to high-res: pixels with nearest (ours), pixels with the SR net "
                         "(the paper's default), the trained latent upsampler (the paper's)"),
      OptionSpec::choice("parallel", "zipar", {"none", "zipar"},
                         "low-res drafting and island waves one token per row and forward (none) or ZipAR's "
                         "parallel rows (the paper); --islands sequential keeps one position per wave"),
      OptionSpec::integer("zipar-window", 4, 1, 1 << 20,
                          "--parallel zipar: tokens a row stays behind the row above (clamped to the grid width)"),
      OptionSpec::choice("backtrack", "local", {"local", "raster"},
                         "rejections resampled in islands (the paper) or raster SD: keep up to the first "
                         "rejection, redraft the rest (the paper's baseline)"),
  };
  d.lossless = [](const OptionValues&) { return false; };
  d.needs = [](const OptionValues& o) {
    StrategyNeeds n;
    n.low_res = n.tokenizer = n.neighbours = true;
    n.sr_net = o.choice("upsampler") == "pixel-sr";
    n.latent_upsampler = o.choice("upsampler") == "latent";
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig& t) {
    return mulo_max_queries(o.integer("band"), 2, t.grid_size);
  };
  d.max_queries_with_low_res = [](const OptionValues& o, const GptConfig& t, const GptConfig& l) {
    const int64_t ratio = l.grid_size > 0 ? std::max<int64_t>(t.grid_size / l.grid_size, 2) : 2;
    return mulo_max_queries(o.integer("band"), ratio, t.grid_size);
  };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<MuloStrategy>(m, in, parse_mulo_options(o, m));
  };
  return d;
}

const RegisterStrategy kMulo(mulo());

}  // namespace
}  // namespace vkspec
