#pragma once
// One image's SJD-PAC state (sjd_pac_strategy.h states the method), shared by one image's strategy
// and a batch's lanes: its candidates, stored q' rows and repairs, with the host side of its steps
// (the tree, the candidates' q rows, the commit, adaptive continuation). Its device rows of a step
// are SjdPacStep's rows [first, first + M).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "decoding/candidate_tree.h"
#include "decoding/sjd_pac_step.h"
#include "decoding/step_event.h"
#include "engine/model/gpt_config.h"

namespace vkspec {

class SjdPacImage {
 public:
  struct Node {
    int32_t parent;
    int64_t position;  // image position of the node's token (root: the last committed one)
    int32_t token;
    int64_t slot;
    int32_t pick;
    bool canonical, shown;
  };
  // Where the image keeps its rows: q' of each position at q_base rows [q_row, q_row + N), the
  // removed candidates and their q^(k) at multihot / q_extra rows [extra_row, + extra rows).
  struct Store {
    const Tensor* q_base;
    int64_t q_row;
    const Tensor *multihot, *q_extra;
    int64_t extra_row;
  };
  // check(token, position): the token as committed, or an Error naming the image.
  using Check = std::function<int32_t(uint32_t, int64_t)>;

  SjdPacImage(const SjdPacOptions& opt, const GptConfig& cfg, uint64_t seed, Store store);

  // The step's tree from committed position c (new positions initialised on the way).
  std::vector<Node> build_tree(CommandStream& s, const std::vector<int32_t>& grid, int64_t c);
  // Positions whose canonical slot the next forward re-feeds (accepted alternates).
  const std::vector<int64_t>& repairs() const { return repairs_; }
  // Records the q' rows the last step left pending and the nodes' q rows, and writes the image's
  // host rows of `step` (its tree at rows [first, first + M), keyed by its seed and step `round`).
  void record_rows(CommandStream& s, const std::vector<Node>& nodes, int64_t c, SjdPacStep& step, int64_t first,
                   uint32_t round);
  // Commits the path the tests accepted and continues the window; grid/committed are the image's.
  void commit(const std::vector<Node>& nodes, const SjdPacReadback& r, int64_t first, std::vector<int32_t>& grid,
              int64_t& committed, StepEvent& e, const Check& check);
  // What the viewer outlines (StepEvent::groups): the positions that hold several candidates (the
  // proactive tree), then the main path's chain.
  static std::vector<std::vector<int32_t>> tree_and_chain(const std::vector<Node>& nodes);

 private:
  // Positions [ready_, end) get their first drafts (--init; K distinct uniform ones below tree_end).
  void initialise(CommandStream& s, const std::vector<int32_t>& grid, int64_t committed, int64_t end, int64_t tree_end);
  std::vector<uint32_t> distinct_uniform(int64_t n, int64_t count) const;
  // q rows of every node: q' for candidate 0, q' without the earlier candidates for the others.
  void record_candidate_rows(CommandStream& s, const std::vector<Node>& nodes, int64_t c, const TensorView& q_tree);
  // The committed path's nodes (root first) under --path.
  AcceptedPath choose_path(const std::vector<Node>& nodes, const std::vector<uint32_t>& accept) const;
  // Commits the path and the token after it; returns that token's position.
  int64_t commit_path(const std::vector<Node>& nodes, const AcceptedPath& a, const SjdPacReadback& r,
                      std::vector<int32_t>& grid, StepEvent& e, const Check& check);
  // Adaptive continuation: new drafts (and, for the next tree's positions, candidates) for every
  // position after f that this forward predicted (node rows at first + node of the step's probs).
  void continue_window(const std::vector<Node>& nodes, const AcceptedPath& a, const SjdPacReadback& r, int64_t f,
                       int64_t first, int64_t committed, const Check& check);
  // Candidates of position j from node P's readback (kids: P's children) under --path; extra ones
  // only for a position of the next step's tree.
  std::vector<uint32_t> next_candidates(const std::vector<Node>& nodes, const std::vector<int32_t>& kids, int32_t P,
                                        const SjdPacReadback& r, bool tree_position) const;
  TensorView q_base(int64_t n) const { return store_.q_base->view().rows(store_.q_row + n, 1); }

  SjdPacOptions opt_;
  int64_t cls_, N_, V_, W_, seq_len_;
  uint64_t seed_;
  Store store_;
  std::vector<std::vector<uint32_t>> cand_;           // per position: candidates, the coupled draft first
  int64_t ready_ = 0;                                 // positions below have candidates and a q' row
  std::vector<std::pair<int64_t, int64_t>> pending_;  // (probs row, position): q' rows to store
  std::vector<int64_t> repairs_;
};

// The rows SjdPacImage keeps on the device, for `images` images: each one's q' rows ([N, V]) and
// removed candidates with their q^(k) rows ([(K - 1)(D - 1), V] each).
class SjdPacTensors {
 public:
  SjdPacTensors(Context& ctx, const SjdPacOptions& opt, const GptConfig& cfg, int64_t images);
  SjdPacImage::Store store(int64_t image) const;

 private:
  int64_t N_, extra_;
  Tensor q_base_, multihot_, q_extra_;
};

}  // namespace vkspec
