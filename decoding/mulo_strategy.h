#pragma once
// MuLo-SD (multi-scale local speculative decoding, CVPR 2026). A band of low-resolution rows is
// sampled by the low-resolution model (ModelSet::low_res, a GPT on a grid r = 2, 4, ... times
// narrower; decoding/mulo_low_res.h, serially or ZipAR-parallel), mapped to high-resolution drafts
// through pixels (PixelResampler: VQ-decode, nearest r x, VQ-encode; low row j covers high rows
// [r j, r j + r)) and verified by the target in one forward: token x at n is accepted when the
// target's pooled probability of x's k nearest codebook entries (ModelSet::neighbours) is >= tau.
// Every rejected token grows to its (2 l + 1)^2 neighbourhood within the band; the union splits
// into 8-connected rejection islands (islands.h), resampled from the target concurrently: one
// forward per wave takes the next position (raster order) of every island, or with --parallel
// zipar (the paper's) every position of an island whose part of the row above is --zipar-window
// columns ahead (island_ready_positions). Accepted and resampled tokens then extend the prefix,
// which is mapped back to low resolution (VQ-decode, r x r average, VQ-encode) and fed to the
// low-resolution model before it samples the next band.
//
// --backtrack raster (the paper's baseline): the band is accepted up to its first rejection in
// raster order, that token is sampled from the verification forward's target distribution (its
// context is exactly the prefix), and everything after it is discarded: the next step redrafts
// the low-resolution band holding the new frontier (fresh Philox round per redraft) and verifies
// from there. No islands; at tau = 1 it is ar token for token.
//
// One step is one target forward: a band's verification (low-resolution drafting, the pixel path
// and verification in one submit) or one resampling wave. Attention: a query sees the slots below
// its position whose fed token is final and was fed there (plus, in verification, the band's
// drafts below it); a slot whose fed token changed after its key and value were computed (a
// resampled token whose successor was accepted) is re-fed in the next forward, with its logits
// unused. Accepted tokens keep the keys and values computed next to the drafts (the "local" in
// local verification). Lossy: quality is measured next to speed (vkspec bench).
// Options: --tau (default 0.05), --k (default 8), --radius l (default 1), --band low-res rows
// per band (default 1), --islands concurrent|sequential (default concurrent), --parallel
// none|zipar (default zipar), --zipar-window (default 4), --backtrack local|raster (default
// local). Sequential resamples one island at a time in raster order, one position per forward,
// so every resampled token sees a complete prefix; the concurrent waves of the paper leave the
// undecided positions of other islands out of a query's context (holes), which costs quality when
// islands are many.
//
// --resample coupled replaces the waves by coupled speculative decoding of the band (SCD-MC with
// the upsampled drafts as first guesses): each forward re-feeds the band from its first undecided
// position, tests every island position's draft exactly against the target (q a point mass on
// the upsampled draft at first, then the distribution the draft was last resolved from), commits
// up to and including the first rejection (resampled from the residual), and takes every later
// island position's resolution as its next draft. Every island token is then an exact sample of
// the target given the final prefix (no holes, no keys and values of replaced tokens), drafts the
// target agrees with survive, and a forward can settle many positions. The only relaxation left
// is the pooled test of the verification forward. --islands does not apply.
//
// --upsampler (decoding/upsampler.h) picks the low-to-high draft mapping: nearest (the pixel path
// above, default), pixel-sr (the pixel path with a trained super-resolution net, the paper's
// default design) or latent (the paper's trained latent upsampler, no pixels on the way up).
#include <memory>
#include <vector>

#include "decoding/mulo_low_res.h"
#include "decoding/pixel_resampler.h"
#include "decoding/upsampler.h"
#include "decoding/strategy.h"

namespace vkspec {

// Queries of the largest forward: a band's verification (r band rows of the target's grid) plus
// the re-fed slots of the band before.
int64_t mulo_max_queries(int64_t band, int64_t ratio, int64_t grid);

struct MuloOptions {
  double tau = 0.05;
  int64_t k = 8, radius = 1, band = 1;
  NeighbourMetric metric = NeighbourMetric::L2;      // --metric: which neighbour table is pooled over
  bool sequential = false;                           // --islands sequential
  bool coupled = false;                              // --resample coupled
  UpsamplerKind upsampler = UpsamplerKind::Nearest;  // --upsampler
  bool raster = false;                               // --backtrack raster
  int64_t zipar_window = 0;                          // --parallel zipar: ZipAR's window (0: --parallel none)
  int64_t ratio = 2;                                 // target grid / low-resolution grid (from the models)
};
// The options checked against the models (band within the low-resolution grid, k clamped to the
// neighbour table); throws naming the option or the missing model.
MuloOptions parse_mulo_options(const OptionValues& o, const ModelSet& m);

class MuloStrategy : public Strategy {
 public:
  MuloStrategy(const ModelSet& models, const StrategyInputs& in, const MuloOptions& opt);

 protected:
  void decode(StepEvent& e) override;

 private:
  void band_step(StepEvent& e);
  void raster_step(StepEvent& e);  // --backtrack raster: verify from the frontier, stop at the first rejection
  void wave_step(StepEvent& e);
  void coupled_step(StepEvent& e);  // --resample coupled: one forward over the band's undecided suffix
  // A band's steps: low-resolution drafting and the pixel path, verification, the commit.
  // Low rows [row, row + low_rows); prev_row: where the low-resolution model's drafts began.
  void record_band_drafts(int64_t row, int64_t low_rows, int64_t prev_row, uint32_t round);
  // sample: also draw the target's token at every position (--backtrack raster).
  void record_band_verification(int64_t first, int64_t Q, bool sample = false);
  void commit_band(int64_t first, int64_t Q, StepEvent& e);
  // Records the coupled forward over [u, band_end); returns its query count.
  int64_t record_coupled_forward(int64_t u, int64_t band_end);
  // Slot s holds the key and value of its position's final token.
  bool slot_valid(int64_t s) const;
  // Slots below `end` (exclusive) holding keys and values of a token that has since changed.
  std::vector<int64_t> stale_slots(int64_t end) const;

  double tau_;
  int64_t k_, radius_, band_rows_;
  const CodebookNeighbours* table_;  // the --metric table
  bool sequential_ = false;          // --islands sequential
  bool coupled_ = false;             // --resample coupled
  bool raster_ = false;              // --backtrack raster
  int64_t zipar_window_ = 0;         // --parallel zipar: waves take island_ready_positions (0: fronts)
  int64_t ratio_;
  int64_t W_, w_, cls_;
  MuloLowResDrafter drafter_;
  PixelResampler resampler_;
  std::unique_ptr<DraftUpsampler> upsampler_;  // --upsampler (nearest records through resampler_)
  int64_t band_ = 0;                           // the band being decoded
  int64_t prev_row_ = 0;                       // low row where the last band's drafts began
  int64_t raster_row_ = -1, redrafts_ = 0;     // --backtrack raster: band row drafted last, times in a row
  std::vector<std::vector<int32_t>> islands_;  // pending, raster order; front = next to resample
  std::vector<int32_t> drafts_;                // the current band's drafts by position
  std::vector<int32_t> slot_fed_;              // per slot: token its key/value were computed with
  std::vector<uint8_t> pending_;               // --resample coupled: position is an undecided island token
  int64_t pending_count_ = 0;                  // --resample coupled: undecided island tokens left
  std::vector<int64_t> requeue_;               // --resample coupled: positions whose q row takes the last p row
  int64_t requeue_first_ = 0;                  // position of that forward's first row
  int64_t resume_ = -1;                        // --resample coupled: first position the next forward predicts
  Tensor hi_grid_, lo_derived_, hi_draft_;
  Tensor probs_, positions_, out_tokens_, pooled_, draft_back_;
  Tensor q_, row_drafts_, accept_back_;  // --resample coupled: draft distributions by position, per-row drafts, tests
};

}  // namespace vkspec
