#pragma once
// sjd-pac with several images per forward (issue 34): each lane's image keeps its own SJD-PAC
// state (SjdPacImage: candidates, stored q' rows, repairs, its own step count) and its own tree;
// one ragged target forward verifies every lane's tree with tree attention at the lane's own
// positions and scratch slots, and SjdPacStep runs every image's multi-draft tests in one
// ops::tree_tests dispatch and its draws under per-row keys, so each image's tokens are those it
// gets decoded alone, seed for seed. Continuous batching and padding: LaneBatchStrategy.
#include <cstdint>
#include <memory>
#include <vector>

#include "decoding/lane_batch_strategy.h"
#include "decoding/sjd_pac_image.h"

namespace vkspec {

class SjdPacBatchStrategy : public LaneBatchStrategy {
 public:
  SjdPacBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in, const SjdPacOptions& opt,
                      int64_t lanes);
  ~SjdPacBatchStrategy() override;

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  struct Lane {
    std::unique_ptr<SjdPacImage> state;    // of lane_image(k)
    std::vector<SjdPacImage::Node> nodes;  // this step's tree
    int64_t c = 0, queries = 0, steps = 0;
    bool active = false;  // decoded this step
  };
  // Lanes that took a new image start afresh; returns the rows per lane this step (T): every
  // active lane's tree built.
  int64_t plan();
  // The lane's tree and repairs, padded to T (spare slots after its scratch ones).
  GptQueries lane_queries(size_t k, int64_t T);
  void commit_lane(size_t k, int64_t T, StepEvent& e);

  SjdPacOptions opt_;
  std::vector<Lane> lanes_;
  SjdPacTensors rows_;    // lane k's image's rows: store(k)
  SjdPacStep step_rows_;  // lanes * (L + D - 1) rows
};

}  // namespace vkspec
