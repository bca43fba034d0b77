#pragma once
// MuLo-SD (multi-scale local speculative decoding, CVPR 2026). A band of low-resolution rows is
// sampled by the low-resolution model (ModelSet::low_res, a GPT on a grid half as wide), mapped
// to high-resolution drafts through pixels (PixelResampler: VQ-decode, nearest 2x, VQ-encode) and
// verified by the target in one forward: token x at n is accepted when the target's pooled
// probability of x's k nearest codebook entries (ModelSet::neighbours) is >= tau. Every rejected
// token grows to its (2 l + 1)^2 neighbourhood within the band; the union splits into 8-connected
// rejection islands (islands.h), resampled from the target concurrently: one forward per wave
// takes the next position (raster order) of every island. Accepted and resampled tokens then
// extend the prefix, which is mapped back to low resolution (VQ-decode, 2x2 average, VQ-encode)
// and fed to the low-resolution model before it samples the next band.
//
// One step is one target forward: a band's verification (low-resolution drafting, the pixel path
// and verification in one submit) or one resampling wave. Attention: a query sees the slots below
// its position whose fed token is final and was fed there (plus, in verification, the band's
// drafts below it); a slot whose fed token changed after its key and value were computed (a
// resampled token whose successor was accepted) is re-fed in the next forward, with its logits
// unused. Accepted tokens keep the keys and values computed next to the drafts (the "local" in
// local verification). Lossy: quality is measured next to speed (vkspec bench).
// Options: --tau (default 0.05), --k (default 8), --radius l (default 1), --band low-res rows
// per band (default 1), --islands concurrent|sequential (default concurrent). Sequential resamples
// one island at a time in raster order, so every resampled token sees a complete prefix; the
// concurrent waves of the paper leave the undecided positions of other islands out of a query's
// context (holes), which costs quality when islands are many.
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

#include "decoding/pixel_resampler.h"
#include "decoding/upsampler.h"
#include "decoding/strategy.h"

namespace vkspec {

// Queries of the largest forward: a band's verification plus the re-fed slots of the band before.
int64_t mulo_max_queries(int64_t band, int64_t grid);

struct MuloOptions {
  double tau = 0.05;
  int64_t k = 8, radius = 1, band = 1;
  NeighbourMetric metric = NeighbourMetric::L2;  // --metric: which neighbour table is pooled over
  bool sequential = false;  // --islands sequential
  bool coupled = false;     // --resample coupled
  UpsamplerKind upsampler = UpsamplerKind::Nearest;  // --upsampler
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
  void wave_step(StepEvent& e);
  void coupled_step(StepEvent& e);  // --resample coupled: one forward over the band's undecided suffix
  // A band's steps: low-resolution drafting and the pixel path, verification, the commit.
  void record_band_drafts(int64_t k, int64_t low_rows);
  void record_band_verification(int64_t first, int64_t Q);
  void commit_band(int64_t first, int64_t Q, StepEvent& e);
  // Records the coupled forward over [u, band_end); returns its query count.
  int64_t record_coupled_forward(int64_t u, int64_t band_end);
  // Slot s holds the key and value of its position's final token.
  bool slot_valid(int64_t s) const;
  // Slots below `end` (exclusive) holding keys and values of a token that has since changed.
  std::vector<int64_t> stale_slots(int64_t end) const;
  // Records the low-resolution model's forwards for band k (low rows [k b, k b + rows)).
  void record_low_res_band(int64_t k, int64_t rows);

  double tau_;
  int64_t k_, radius_, band_rows_;
  const CodebookNeighbours* table_;  // the --metric table
  bool sequential_ = false;  // --islands sequential
  bool coupled_ = false;     // --resample coupled
  int64_t W_, w_, cls_;
  KvCache low_cache_;
  PixelResampler resampler_;
  std::unique_ptr<DraftUpsampler> upsampler_;  // --upsampler (nearest records through resampler_)
  int64_t band_ = 0;                            // the band being decoded
  std::vector<std::vector<int32_t>> islands_;   // pending, raster order; front = next to resample
  std::vector<int32_t> drafts_;                 // the current band's drafts by position
  std::vector<int32_t> slot_fed_;               // per slot: token its key/value were computed with
  std::vector<uint8_t> pending_;                // --resample coupled: position is an undecided island token
  int64_t pending_count_ = 0;                   // --resample coupled: undecided island tokens left
  std::vector<int64_t> requeue_;                // --resample coupled: positions whose q row takes the last p row
  int64_t requeue_first_ = 0;                   // position of that forward's first row
  int64_t resume_ = -1;                         // --resample coupled: first position the next forward predicts
  Tensor hi_grid_, lo_grid_, lo_derived_, hi_draft_, lo_positions_, lo_probs_, lo_tokens_;
  Tensor probs_, positions_, out_tokens_, pooled_, draft_back_;
  Tensor q_, row_drafts_, accept_back_;  // --resample coupled: draft distributions by position, per-row drafts, tests
};

}  // namespace vkspec
