#pragma once
// FlashAR (Zhou et al., arXiv 2605.09430): a post-trained model (engine/model/flashar_model.h)
// emits a whole anti-diagonal of the token grid per forward, H + W - 1 forwards per image.
// Step 0 runs the class token and samples the corner; step k feeds the cells of diagonal k - 1
// (at their raster positions, seeing the prefix, every earlier diagonal and each other) and
// samples every cell of diagonal k from fused logits: row 0 from H of its left neighbour,
// column 0 from V of its upper one, the rest g H + (1 - g) V with the learned gate, per CFG row,
// then CFG, temperature, top-k and top-p as every method samples (Philox key (seed, cell, Sample)).
// The order of operations is tools/flashar_model.py generate_diagonal's. Lossy: the samples
// follow the post-trained model's diagonal factorisation, not the raster target's.
#include <utility>
#include <vector>

#include "decoding/strategy.h"
#include "engine/model/flashar_model.h"

namespace vkspec {

// Cells (row, column) of anti-diagonal d of a W x W grid, by ascending row.
std::vector<std::pair<int64_t, int64_t>> diagonal_cells(int64_t width, int64_t d);

class FlashArStrategy : public Strategy {
 public:
  FlashArStrategy(const ModelSet& models, const StrategyInputs& in);

 protected:
  void decode(StepEvent& e) override;

 private:
  // The forward feeding diagonal d - 1 (the class token for d = 0), its two heads read back.
  void run_forward(int64_t d);
  // Fused logits of every target of diagonal d, per CFG row (rows [0, n) conditional, [n, 2n)
  // null), from the forward's two heads.
  void fuse(int64_t d);
  // Samples the targets of diagonal d from the fused logits; their tokens.
  std::vector<uint32_t> sample(int64_t d);

  FlashArModel& model_;
  KvCache branch_cache_;
  Tensor h_read_, v_read_;  // f32 [rows * W, vocab]: the forward's heads, read back
  Tensor fused_, positions_, probs_, tokens_;
  std::vector<float> h_, v_, fused_host_;  // the last forward's heads and the fused rows
  int64_t fed_ = 0;                        // queries per row of the last forward
};

}  // namespace vkspec
