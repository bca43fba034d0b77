#pragma once
// The window methods (sjd, scd-mc, scd-gs) with several images per forward (issue 34): each image
// keeps its own window, drafts, draft distributions and acceptance, exactly as WindowStrategy has
// them, and one ragged target forward (GptQueries::ragged) verifies every image's window at its own
// positions. Random numbers are keyed per row by the image's seed and its own step count
// (ops::RowKeys), so an image's tokens are those it gets decoded alone, seed for seed.
//
// Continuous batching and padding: LaneBatchStrategy.
//
// --init heads: the draft heads run on every lane's window rows of the step's forward, in one
// call (HeadProposals), each lane's proposals in a table of its own ([N, V] per lane), so that a
// lane's drafts and head forwards are those its image gets alone.
//
// What a lane's draft distributions live in: the previous step's target probabilities (a row of
// position n's p is its next q, as in WindowStrategy), so each step copies every lane's carried
// rows into this step's q and the two p buffers alternate.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "decoding/lane_batch_strategy.h"
#include "decoding/window_strategy.h"

namespace vkspec {

class AcceptRule;

class WindowBatchStrategy : public LaneBatchStrategy {
 public:
  // lanes: images decoded at once (<= in.size()).
  WindowBatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in, DraftRule rule,
                      const WindowOptions& opt, int64_t lanes);
  ~WindowBatchStrategy() override;

 protected:
  void decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) override;

 private:
  struct Lane {
    int64_t image = -1;                          // LaneBatchStrategy::lane_image
    std::vector<uint32_t> drafts;                // current draft per position (valid in [committed, ready))
    int64_t ready = 0;                           // positions below have a draft and a q row
    int64_t steps = 0;                           // the image's own steps so far: its Philox round
    int64_t p_row = 0, p_from = 0;               // position p_from's row of the previous step's p
    int64_t c = 0, drafts_now = 0, queries = 0;  // this step's
  };
  // Host rows of one step, uploaded before it is recorded.
  struct StepRows {
    std::vector<uint32_t> positions, drafts, rounds, purposes;
    std::vector<uint64_t> seeds;
    std::vector<std::pair<int64_t, uint32_t>> point_masses;  // q rows of copied initial drafts
  };

  // Lanes that took a new image start afresh.
  void start_lanes();
  int64_t plan();  // each lane's window this step; returns the rows per lane (T)
  uint32_t token_at(const Lane& l, int64_t n) const;
  // This step's q rows (carried from the previous p, initialised, or zero) and the lane's host rows.
  void record_q_rows(size_t lane, int64_t T, StepRows& rows);
  // The lane's first `real` window queries, padded to T.
  GptQueries lane_queries(size_t lane, int64_t real, int64_t T);
  void upload_rows(const StepRows& rows);
  // Acceptance and resolution of rows [0, R) under the rule, with the successor and independent
  // drafts the rule and alpha need, into out_.
  void record_verification(int64_t R);
  // Commits the lane's rows of the step's read-back and moves its undecided drafts on.
  void commit_lane(size_t lane, int64_t T, const std::vector<uint32_t>& out, StepEvent& e);
  // --init heads: the heads on every lane's rows of the forward (T rows per lane); whether they
  // ran for each lane.
  std::vector<bool> record_heads(const TensorView& hidden, int64_t T);

  DraftRule rule_;
  WindowOptions opt_;
  bool exact_successor_ = false, partial_ = false;
  std::vector<Lane> lanes_;
  std::unique_ptr<AcceptRule> accept_;
  std::unique_ptr<HeadProposals> heads_;  // DraftInit::Heads
  Tensor p_[2];                           // f32 [lanes * (window + 1), V]: this step's and the previous step's target
  int cur_ = 0;                           // which p_ this step writes
  Tensor q_;                              // f32 [lanes * (window + 1), V]: this step's draft distributions
  Tensor positions_, drafts_, rounds_, purposes_, seeds_;  // host-written per-row inputs
  Tensor exact_accept_;                                    // u32 [rows], under a lossy rule with coupled drafts
  Tensor out_;  // u32 [4, rows], read back: accept, resolved, fresh, independent
};

}  // namespace vkspec
