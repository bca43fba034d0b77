#pragma once
// ZipAR (zipar_strategy.h) with several images per forward (issue 34): each lane keeps its own
// rows' schedule (ZipArRows), one ragged target forward (GptQueries::ragged) feeds every lane's
// active rows at their own positions, and one sampler call draws every row's token under its
// image's seed and Philox position, so an image's tokens are those it gets decoded alone. Lanes
// with fewer queries than the step's widest pad (LaneBatchStrategy), which also refills the
// lanes of finished images (continuous batching).
#include <cstdint>
#include <vector>

#include "decoding/lane_batch_strategy.h"
#include "decoding/zipar_rows.h"

namespace vkspec {

class ZipArBatchStrategy : public LaneBatchStrategy {
 public:
  // lanes: images decoded at once (<= in.size()).
  ZipArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in, int64_t window, int64_t lanes);

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  // The lane's real queries (its rows' plan), padded to T.
  GptQueries lane_queries(size_t lane, const std::vector<ZipArQuery>& plan, int64_t T);
  // Commits the lane's sampled tokens (rows [lane * T, lane * T + plan size) of `tokens`).
  void commit_lane(size_t lane, const std::vector<ZipArQuery>& plan, int64_t T, const std::vector<uint32_t>& tokens,
                   StepEvent& e);

  int64_t window_;
  std::vector<ZipArRows> rows_;  // per lane, for its current image
  Tensor positions_, seeds_;     // per row: Philox position, image seed (uploads)
  Tensor probs_, tokens_;        // per row: p, sampled token (read back)
};

}  // namespace vkspec
