#pragma once
// Batch strategies with continuous batching (issue 34): `lanes` lanes, each decoding one image at
// a time; when an image completes, the next input not yet started takes its lane at the next step
// (its first query is its condition's, beside lanes further on: GptBatch's per-image condition
// queries), so no image waits for the slowest of a group. Every lane has the same number of
// queries in a forward (GptQueries::ragged): lanes without an image, and the rows an image leaves
// empty, run padding queries that write spare KV slots and whose results are ignored.
// WindowBatchStrategy and SjdPacBatchStrategy are such strategies.
#include <cstdint>
#include <string>
#include <vector>

#include "decoding/batch_strategy.h"
#include "engine/ops/attention_mask.h"

namespace vkspec {

class LaneBatchStrategy : public BatchStrategy {
 protected:
  // lanes: images decoded at once (1 .. in.size()); scratch_slots: spare KV slots after the
  // sequence, for the strategy's own use and the padding queries.
  LaneBatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in,
                    int64_t max_queries, int64_t scratch_slots, int64_t lanes);

  size_t lanes() const { return lane_image_.size(); }
  // The image in lane k (an index into images_), -1 while the lane has had none.
  int64_t lane_image(size_t k) const { return lane_image_[k]; }
  // Whether lane k holds an image still being decoded.
  bool lane_busy(size_t k) const { return lane_image_[k] >= 0 && !done(static_cast<size_t>(lane_image_[k])); }
  // Idle lanes and lanes whose image is done take the next inputs (a caption's condition positions
  // prefilled into the lane's cache rows, as TargetSession's own prefill runs them); returns the
  // lanes that took one, whose state the strategy starts afresh.
  std::vector<size_t> admit();
  // The lane's batch rows' conditions: its image's, and the null form with CFG.
  std::vector<const Condition*> lane_conditions(size_t k);
  // Lane k's queries as a step sends them: q's `real` queries (built into mb, T rows; the spare
  // slots after the sequence below first_spare are theirs) padded to T, with the mask packed and
  // the lane's conditions. Padding queries sit at the lane's last position (any image position
  // will do), each writing its own spare slot from first_spare on and seeing the slots up to
  // that position; their results are never read.
  GptQueries padded_lane_queries(size_t k, GptQueries q, ops::AttentionMaskBuilder& mb, int64_t real, int64_t T,
                                 int64_t first_spare);
  // A lane's T queries, all padding.
  GptQueries padding_queries(size_t k, int64_t T);

 private:
  void record_caption_prefill(size_t lane);
  void pad_queries(GptQueries& q, ops::AttentionMaskBuilder& mb, int64_t real, int64_t T, int64_t last,
                   int64_t first_spare) const;

  std::vector<int64_t> lane_image_;
  size_t next_input_ = 0;
};

}  // namespace vkspec
