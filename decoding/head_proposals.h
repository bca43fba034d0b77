#pragma once
// The token draft heads' proposals for the window methods' --init heads (DraftInit::Heads), for one
// image (WindowStrategy) or for every lane of a batch (WindowBatchStrategy): each step the heads
// run on the window rows just verified, and every later position whose proposal can still be read
// gets a new one from the nearest head (smallest offset) whose rows reach it. A proposal is a
// token and its q row (the heads' filtered distribution), kept per lane until the position enters
// the window: a table [image tokens, vocab] per lane.
//
// Random numbers are keyed by the lane's image seed, the position and the image's own step
// (Philox purpose DraftHead, round = step * 8 + head), and the sampler and the heads' matmuls give
// each row the bits it gets alone, so a lane's proposals do not depend on the lanes beside it.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "decoding/sampler_settings.h"
#include "decoding/strategy.h"

namespace vkspec {

class TargetSession;

// One lane's part of a step.
struct HeadStep {
  int64_t c = 0, q = 0;  // the window: rows verified at positions c .. c + q - 1
  // The hidden row of window row 0, per batch row of the lane's image (its conditional row, then
  // the null row with CFG): window row t is hidden_base[b] + t.
  std::vector<int64_t> hidden_base;
  uint64_t seed = 0;
  uint32_t round = 0;  // the image's own step
  // Whether a proposal for a position inside the window can still be read (redrafting); none
  // when empty. Proposals past the window are always made.
  std::function<bool(int64_t)> readable_inside;
};

class HeadProposals {
 public:
  // lanes: images decoded at once; max_queries: the most window rows of one lane's step.
  // Throws Error naming `owner` when `models` has no draft heads.
  HeadProposals(const ModelSet& models, const std::string& owner, int64_t lanes, int64_t max_queries);

  // Lane k starts a new image: no proposals yet.
  void reset(size_t lane);
  // Lane k's newest proposal for position n: its token (-1 when none) and its q row.
  int32_t token(size_t lane, int64_t n) const { return tokens_[lane][static_cast<size_t>(n)]; }
  TensorView q_row(size_t lane, int64_t n) const;
  // Lane k's proposal for n as a draft: its token into `draft` and the copy of its q row to `q`
  // added to `copies`; false (nothing changed) when there is none.
  bool take(size_t lane, int64_t n, const TensorView& q, std::vector<CopyRegion>& copies, uint32_t& draft) const;

  // Records the heads on the rows each lane's step picks (hidden: the forward's final hidden
  // state), the sampler on their logits and the copy of each proposal's q row into its lane's
  // table, in t's stream. Returns per lane whether the heads ran for it (a head forward).
  std::vector<bool> record(TargetSession& t, const TensorView& hidden, const std::vector<HeadStep>& steps,
                           const SamplerSettings& sampler);
  // After the stream has run: the sampled tokens into the tables.
  void read();

 private:
  // Which head proposes each position this step: per position (head, window row; head -1: none).
  std::vector<std::pair<int, int64_t>> pick(const HeadStep& step) const;

  Context& ctx_;
  DraftHeads& heads_;
  int64_t image_tokens_, vocab_, grid_, rows_per_lane_;
  std::vector<std::vector<int32_t>> tokens_;         // per lane and position
  Tensor table_;                                     // f32 [lanes * image tokens, V]: each lane's proposals' q rows
  Tensor probs_, sampled_;                           // f32 [rows, V] / u32 [rows] (read back): the sampler's rows
  Tensor positions_, purposes_, seeds_;              // host-written per sampled row
  std::vector<std::pair<size_t, int64_t>> pending_;  // (lane, position) of each sampled row
};

}  // namespace vkspec
