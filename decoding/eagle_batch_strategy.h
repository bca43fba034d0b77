#pragma once
// EagleStrategy's methods (eagle, adaptive-tree, vvs, lantern --drafter eagle, lantern++) with
// several images per forward (issue 48): each lane's image keeps its own EagleLane (drafter cache
// and catch-up, tree grown and cut on the device, adaptive size, vvs schedule, repairs), and one
// ragged target forward (GptQueries::ragged) verifies every lane's tree at its own positions and
// scratch slots. Each lane's drafter forwards, tests and Philox keys are those its image gets
// alone (its seed and its own step count), so its tokens are too, seed for seed.
//
// A step: every lane's begin(); one submit when some lane's tree must be read before the forward
// (a relaxed rule's cut, a round vvs may skip); every lane's prepare() (a skipped round commits
// here and sits out the forward); then the lanes' growth, one forward, one sampler call over
// every lane's rows, each lane's tests, one submit, each lane's commit. The drafter runs lane by
// lane (its forwards are one layer; the target's is the batched one).
//
// Continuous batching and padding: LaneBatchStrategy.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/eagle_lane.h"
#include "decoding/lane_batch_strategy.h"

namespace vkspec {

class EagleBatchStrategy : public LaneBatchStrategy {
 public:
  // lanes: images decoded at once (<= in.size()).
  EagleBatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in,
                     const EagleOptions& options, int64_t lanes);
  ~EagleBatchStrategy() override;

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  // The lane's queries, padded to T.
  GptQueries lane_queries(size_t k, int64_t T);

  std::vector<std::unique_ptr<EagleLane>> lanes_;
  std::vector<bool> verifies_;  // this step: the lane's tree is in the forward
  Tensor probs_;                // f32 [lanes * max queries, V]
};

// A method EagleStrategy decodes, alone or several images per forward: the descriptor's make and
// make_batch, with the method's options from parse (which throws Error naming what is wrong).
void set_eagle_factories(StrategyDescriptor& d, EagleOptions (*parse)(const OptionValues&));

}  // namespace vkspec
