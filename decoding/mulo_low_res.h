#pragma once
// MuLo-SD's low-resolution drafting: the low-resolution model samples a band of full rows on the
// GPU, into grid(), inside the step's command buffer (no read-back).
//
// Serial (--parallel none): one forward per token in raster order. ZipAR (--parallel zipar, the
// paper's): low row j + 1 starts once row j has `window` tokens and stays `window` behind it;
// every forward feeds one new token per active row at its true 2D position and samples each
// active row's next token, so b rows of w tokens take (b - 1) window + w forwards instead of b w.
// As in decoding/zipar_strategy.h, a row's first query sits at the slot of the row above's last
// token, which does not exist yet: it is fed a placeholder (the newest token of the row above),
// its slot stays hidden from every other query, and it is re-fed with the real token in the
// forward after the row above completes. A query sees the slots below its position fed a real
// token (the prefix, the band's sampled tokens).
//
// The first forward of a band re-feeds the rows the model last saw as drafts (from prev_row up
// to the band) with their tokens as derived from the high-resolution prefix, then predicts the
// band's first token; the first band starts from the condition. Token m is sampled with the
// Philox key (seed, m, Draft round).
#include <cstdint>
#include <vector>

#include "decoding/strategy.h"
#include "decoding/target_session.h"
#include "engine/ops/sampler.h"

namespace vkspec {

class MuloLowResDrafter {
 public:
  // band_rows: the most rows a band drafts. window: ZipAR's window (clamped to the grid width),
  // 0 for serial drafting.
  MuloLowResDrafter(TargetSession& session, Gpt& low, int64_t band_rows, int64_t window);

  // Records the forwards that sample low rows [row, row + rows) into grid(), re-feeding rows
  // [prev_row, row) from `derived` first (u32 [w^2], the low-resolution form of the prefix).
  // Returns the number of low-resolution forwards recorded.
  int64_t record_band(const StrategyInputs& in, const TensorView& derived, int64_t row, int64_t rows, int64_t prev_row,
                      uint32_t round);
  // u32 [w^2]: the prefix's rows (copied in by the caller) and the drafted rows.
  const Tensor& grid() const { return grid_; }
  int64_t window() const { return window_; }

 private:
  void record_serial(const ops::SamplerParams& sp, const TensorView& derived, int64_t row, int64_t rows,
                     int64_t prev_row);
  void record_zipar(const ops::SamplerParams& sp, const TensorView& derived, int64_t row, int64_t rows,
                    int64_t prev_row);
  // The band's first forward: re-feeds [P0, P1) (or the condition) and samples token P1.
  void record_first(const ops::SamplerParams& sp, const TensorView& derived, int64_t row, int64_t prev_row);

  TargetSession& session_;
  Gpt& low_;
  int64_t w_, cls_, window_;
  int64_t forwards_ = 0;  // of the band being recorded
  KvCache cache_;
  Tensor grid_, positions_, probs_, tokens_;
  Tensor query_positions_;  // ZipAR: per query of a band's forwards, the position it samples (upload)
};

}  // namespace vkspec
