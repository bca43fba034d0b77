#pragma once
// FlashAR (Zhou et al., arXiv 2605.09430): a post-trained model (engine/model/flashar_model.h)
// emits a whole anti-diagonal of the token grid per forward, H + W - 1 forwards per image.
// Step 0 runs the last condition position (c2i's class token; t2i's caption or Janus-Pro's prompt
// positions before it are prefilled into the backbone's cache and the branch's together) and
// samples the corner; step k feeds the cells of diagonal k - 1 (at their raster positions, seeing
// the prefix, every earlier diagonal and each other) and samples every cell of diagonal k from
// fused logits: row 0 from H of its left neighbour, column 0 from V of its upper one, the rest
// g H + (1 - g) V with the learned gate, per CFG row (ops::flashar_fuse), then CFG, temperature,
// top-k and top-p as every method samples (Philox key (seed, cell, Sample)); one submit per step.
// The order of operations is tools/flashar_model.py generate_diagonal's. Lossy: the samples
// follow the post-trained model's diagonal factorisation, not the raster target's.
// With --batch every image of the batch is at the same diagonal in every forward (lockstep).
#include <utility>
#include <vector>

#include "decoding/batch_strategy.h"
#include "decoding/strategy.h"
#include "engine/model/flashar_model.h"

namespace vkspec {

// Cells (row, column) of anti-diagonal d of a W x W grid, by ascending row.
std::vector<std::pair<int64_t, int64_t>> diagonal_cells(int64_t width, int64_t d);

// The set whose target is the FlashAR file's backbone (the session's forwards, KV cache and
// vocabulary are the post-trained model's); throws Error when the set has no FlashAR model. The
// strategies restate each input's condition as the backbone takes it (Gpt::own_condition: a
// Janus-Pro prompt's rows of the fine-tuned text table, not the target's).
ModelSet flashar_session_set(const ModelSet& models);

// One step of diagonal decoding for the images of a session (all at the same diagonal): the
// forward, the fusion and the sampler in one submit, shared by the single and the batch strategy.
class FlashArDiagonals {
 public:
  FlashArDiagonals(FlashArModel& model, TargetSession& session);
  // Samples diagonal d of every image: grids[g] is image g's grid (diagonals < d committed),
  // seeds[g] its seed. Image g's tokens for the cells of diagonal d (diagonal_cells order) are at
  // [g * cells, (g + 1) * cells) of `tokens`, the weights of H its conditional rows took
  // (StepEvent::gates) at the same places of `gates`.
  struct Sampled {
    std::vector<uint32_t> tokens;
    std::vector<float> gates;
  };
  Sampled step(int64_t d, const std::vector<const std::vector<int32_t>*>& grids, const std::vector<uint64_t>& seeds,
               const SamplerSettings& sampler);

 private:
  const GptBatch& queries(int64_t d, const std::vector<const std::vector<int32_t>*>& grids);
  // Uploads the fusion's sources for diagonal d's targets after a forward of `fed` queries per row;
  // returns the fused rows.
  int64_t write_sources(int64_t d, int64_t fed);

  FlashArModel& model_;
  TargetSession& t_;
  int64_t width_, vocab_;
  KvCache branch_cache_;
  Tensor sources_;  // u32 [rows * W, 3]: each fused row's H row, V row and kind (host-written)
  Tensor fused_, gates_, positions_, seeds_, probs_, tokens_;
};

class FlashArStrategy : public Strategy {
 public:
  FlashArStrategy(const ModelSet& models, const StrategyInputs& in);

 protected:
  void decode(StepEvent& e) override;

 private:
  FlashArDiagonals diagonals_;
};

class FlashArBatchStrategy : public BatchStrategy {
 public:
  FlashArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in);

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  FlashArDiagonals diagonals_;
};

}  // namespace vkspec
