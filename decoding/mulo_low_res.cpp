#include "decoding/mulo_low_res.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace vkspec {

MuloLowResDrafter::MuloLowResDrafter(TargetSession& session, Gpt& low, int64_t band_rows, int64_t window)
    : session_(session),
      low_(low),
      w_(low.config().grid_size),
      cls_(low.config().cls_token_num),
      window_(window > 0 ? std::min(window, w_) : 0),
      cache_(session.make_cache(low, stage::kLowRes)) {
  Context& ctx = session.ctx();
  const int64_t n = w_ * w_, V = low.config().vocab_size;
  // The first forward re-feeds at most a band's rows; a ZipAR forward has at most one query and
  // one repair per row.
  const int64_t max_q = std::max(band_rows * w_, 2 * band_rows);
  grid_ = ctx.tensor(DType::U32, {n}, "mulo low-resolution grid");
  positions_ = ctx.tensor(DType::U32, {n}, "mulo low-resolution positions");
  std::vector<uint32_t> iota(static_cast<size_t>(n));
  std::iota(iota.begin(), iota.end(), 0u);
  ctx.upload(positions_, iota.data(), iota.size() * 4);
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "mulo low-resolution probabilities");
  tokens_ = ctx.tensor(DType::U32, {max_q}, "mulo low-resolution samples");
  if (window_ > 0)
    query_positions_ = ctx.tensor(DType::U32, {band_rows * w_ * 2 * band_rows + 1},
                                  "mulo low-resolution query positions", MemoryUsage::Upload);
}

int64_t MuloLowResDrafter::record_band(const StrategyInputs& in, const TensorView& derived, int64_t row, int64_t rows,
                                       int64_t prev_row, uint32_t round) {
  if (row < 0 || rows < 1 || row + rows > w_ || prev_row > row)
    throw Error("mulo: low-resolution band [" + std::to_string(row) + ", " + std::to_string(row + rows) +
                ") outside the " + std::to_string(w_) + "-row grid");
  const ops::SamplerParams sp = in.sampler.op_params(low_.config().vocab_size, in.seed, ops::SampleMode::Categorical,
                                                     philox::purpose_word(philox::Purpose::Draft, round));
  forwards_ = 0;
  if (window_ > 0)
    record_zipar(sp, derived, row, rows, prev_row);
  else
    record_serial(sp, derived, row, rows, prev_row);
  return forwards_;
}

void MuloLowResDrafter::record_first(const ops::SamplerParams& sp, const TensorView& derived, int64_t row,
                                     int64_t prev_row) {
  const GptConfig& lc = low_.config();
  CommandStream& s = session_.stream();
  const int64_t m = row * w_;
  const int64_t P0 = row > 0 ? std::min(std::max<int64_t>(prev_row, 0) * w_, m - 1) : m - 1;
  const int64_t first_slot = row == 0 ? cls_ - 1 : cls_ + P0, n = row == 0 ? 1 : m - P0;
  const GptBatch& b =
      session_.batch_for(low_, cache_,
                         GptQueries::causal(lc, first_slot, n,
                                            std::vector<uint32_t>(static_cast<size_t>(first_slot >= cls_ ? n : 0), 0u),
                                            session_.conditions(low_), cache_.slots()));
  if (first_slot >= cls_) s.copy(derived.rows(P0, n), b.token_ids().rows(0, n));
  const GptOutputs out = session_.forward_of(low_, b, cache_, stage::kLowRes);
  ops::sampler(s, out.logits, positions_.view().rows(m - n + 1, n), sp, probs_.view().rows(0, n),
               tokens_.view().rows(0, n));
  s.copy(tokens_.view().rows(n - 1, 1), grid_.view().rows(m, 1));
  ++forwards_;
}

void MuloLowResDrafter::record_serial(const ops::SamplerParams& sp, const TensorView& derived, int64_t row,
                                      int64_t rows, int64_t prev_row) {
  const GptConfig& lc = low_.config();
  CommandStream& s = session_.stream();
  record_first(sp, derived, row, prev_row);
  for (int64_t m = row * w_ + 1; m < (row + rows) * w_; ++m) {
    const GptBatch& b =
        session_.batch_for(low_, cache_,
                           GptQueries::causal(lc, cls_ + m - 1, 1, {0u}, session_.conditions(low_), cache_.slots()));
    s.copy(grid_.view().rows(m - 1, 1), b.token_ids().rows(0, 1));
    const GptOutputs out = session_.forward_of(low_, b, cache_, stage::kLowRes);
    ops::sampler(s, out.logits, positions_.view().rows(m, 1), sp, probs_.view().rows(0, 1), tokens_.view().rows(0, 1));
    s.copy(tokens_.view().rows(0, 1), grid_.view().rows(m, 1));
    ++forwards_;
  }
}

void MuloLowResDrafter::record_zipar(const ops::SamplerParams& sp, const TensorView& derived, int64_t row, int64_t rows,
                                     int64_t prev_row) {
  const GptConfig& lc = low_.config();
  CommandStream& s = session_.stream();
  record_first(sp, derived, row, prev_row);
  struct Query {
    int64_t slot, fed_from, predicts;  // fed_from: position in grid_; predicts: -1 for a repair
    bool real;                         // fed the final token of its slot's position
  };
  std::vector<int64_t> next_col(static_cast<size_t>(rows), 0);
  std::vector<bool> placeholder(static_cast<size_t>(rows), false);
  next_col[0] = 1;
  // The prefix (and the first forward's slots) hold real tokens; the band's own slots not yet.
  std::vector<uint8_t> valid(static_cast<size_t>(cache_.slots()), 0);
  std::fill(valid.begin(), valid.begin() + (cls_ + row * w_), 1);
  std::vector<uint32_t> host_positions;
  auto at = [&](int64_t j) { return next_col[static_cast<size_t>(j)]; };
  while (true) {
    std::vector<Query> queries;
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t c = at(j);
      if (c >= w_ || (j > 0 && at(j - 1) < std::min(c + window_, w_))) continue;
      const int64_t m = (row + j) * w_ + c;
      if (c > 0 || j == 0 || at(j - 1) == w_) {
        queries.push_back({cls_ + m - 1, m - 1, m, true});
      } else {  // the row above's last token does not exist yet
        queries.push_back({cls_ + m - 1, (row + j - 1) * w_ + at(j - 1) - 1, m, false});
        placeholder[static_cast<size_t>(j)] = true;
      }
    }
    if (queries.empty()) break;
    for (int64_t j = 1; j < rows; ++j)
      if (placeholder[static_cast<size_t>(j)] && at(j - 1) == w_) {
        const int64_t m = (row + j) * w_;
        queries.push_back({cls_ + m - 1, m - 1, -1, true});
        placeholder[static_cast<size_t>(j)] = false;
      }
    std::sort(queries.begin(), queries.end(), [](const Query& a, const Query& b) { return a.slot < b.slot; });
    const int64_t T = static_cast<int64_t>(queries.size());
    std::vector<int64_t> slots;
    for (const Query& q : queries) {
      slots.push_back(q.slot);
      valid[static_cast<size_t>(q.slot)] = q.real;
    }
    const GptBatch& b =
        session_.batch_for(low_, cache_,
                           GptQueries::at_positions(lc, slots, std::vector<uint32_t>(static_cast<size_t>(T), 0u),
                                                    session_.conditions(low_), cache_.slots(),
                                                    [&](int64_t, int64_t slot) {
                                                      return valid[static_cast<size_t>(slot)] != 0;
                                                    }));
    std::vector<CopyRegion> feed, keep;
    const int64_t first_position = static_cast<int64_t>(host_positions.size());
    for (int64_t i = 0; i < T; ++i) {
      const Query& q = queries[static_cast<size_t>(i)];
      feed.push_back({grid_.view().rows(q.fed_from, 1), b.token_ids().rows(i, 1)});
      host_positions.push_back(static_cast<uint32_t>(std::max<int64_t>(q.predicts, 0)));
      if (q.predicts >= 0) keep.push_back({tokens_.view().rows(i, 1), grid_.view().rows(q.predicts, 1)});
    }
    s.copy(feed);
    const GptOutputs out = session_.forward_of(low_, b, cache_, stage::kLowRes);
    ops::sampler(s, out.logits, query_positions_.view().rows(first_position, T), sp, probs_.view().rows(0, T),
                 tokens_.view().rows(0, T));
    s.copy(keep);
    for (const Query& q : queries)
      if (q.predicts >= 0) ++next_col[static_cast<size_t>(q.predicts / w_ - row)];
    ++forwards_;
  }
  session_.ctx().upload(query_positions_, 0, host_positions.data(), host_positions.size() * 4);
}

}  // namespace vkspec
