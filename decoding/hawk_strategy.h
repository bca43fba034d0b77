#pragma once
// Hawk (Chen et al. 2025): lossless speculative decoding with spatial draft heads
// (ModelSet::heads, DraftHeads). At the query that predicted the last committed token, the
// horizontal heads h1..h4 sample the next four tokens of the row and the vertical heads v1, v2
// sample the tokens one and two rows below; vertical proposals wait in a speculation cache until
// decoding reaches their position. Each step verifies a candidate tree in one target forward:
// depth t holds the candidates for the t-th undecided position, the horizontal one as the
// primary (whose child continues the chain) and cached vertical ones as leaf alternates (the
// first vertical one is the primary where no horizontal head reaches).
//
// Verification is multi-draft speculative sampling: a node's children are tried in order, child
// i against the residual r_i (r_0 = p, r_{i+1} = norm(max(r_i - q_i, 0))) with its own q; the
// first accepted child continues the walk; when all are rejected (or there are none) the next
// token is drawn from the last residual. Every candidate is an independent sample of the q it is
// tested with, so the output is distributed exactly as ar's. All residuals, tests and samples
// for every node run on the GPU in the step's one submit (each node as if the walk reached it);
// the host reads back a few integers per node and walks the tree.
//
// The heads run on the one row the walk ended on, at the start of the next step's submit (from
// a copy of the previous forward's hidden states): their tokens go into the candidate tree on the
// GPU (copied into the forward's token ids and the tests' token row) and reach the host with the
// step's read-back. Running them on every node's row in the step that verified the tree, as if
// the walk could end anywhere, cost most of a step.
//
// Alternates live in scratch KV slots; when one is accepted its canonical slot is re-fed in the
// next forward (a query whose logits are not used).
#include <array>
#include <memory>
#include <vector>

#include "decoding/strategy.h"
#include "engine/model/draft_heads.h"

namespace vkspec {

// Queries of the largest hawk forward: root, four depths of up to three candidates, one repair.
int64_t hawk_max_queries();

class HawkStrategy : public Strategy {
 public:
  // depth: candidate depths per step (1..4).
  HawkStrategy(const ModelSet& models, const StrategyInputs& in, int64_t depth);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Candidate {
    int source;       // 0: this step's head proposals (head index in `head`), 1: vertical cache entry
    int head = 0;     // head index (source 0) or cache slot 0/1 (source 1)
  };
  struct Node {
    int32_t parent;   // -1 for the root
    int64_t position; // image position of the node's token (root: the last committed one)
    int32_t token;    // candidates: known after the step's submit (made on the GPU)
    bool alternate;   // a leaf in a scratch slot
    int64_t slot;
  };
  struct Tree {
    std::vector<Node> nodes;
    std::vector<Candidate> sources;  // per node (the root's is unused)
  };
  struct Readback {
    std::vector<uint32_t> accept, final_token;  // per node
  };
  // Records the heads on row head_row_ of the previous forward (proposals for the positions after
  // head_from_) and moves the vertical ones into the speculation cache.
  void record_heads();
  // The candidate tree from committed position e: the root, then per depth the primary (child of
  // the previous primary) and its alternates.
  Tree build_tree(int64_t e) const;
  // The forward's queries: every node sees the committed slots below the root, the root, its
  // ancestors and itself; the repair query (an accepted alternate's canonical slot) what lies below it.
  GptQueries tree_queries(const Tree& tree, int64_t e) const;
  // Gathers each candidate's q row and token (also into the forward's token ids).
  void record_candidates(const Tree& tree, const GptBatch& batch, int64_t e);
  // Every node as if the walk reached it: its children's tests against the running residual,
  // and the token drawn from the residual left when all of them are rejected.
  void record_tests(const Tree& tree, uint32_t round);
  // Walks the accepted path, commits it and the token after it; returns the node the walk ended on.
  int32_t walk_and_commit(Tree& tree, const Readback& r, StepEvent& e);

  int64_t W_, cls_, depth_;
  DraftHeads& heads_;
  std::vector<int> horizontal_;        // head index of h1..h_depth (-1 when absent)
  std::array<int, 2> vertical_{-1, -1};
  // The row of the previous forward whose node the walk ended on (-1 before the first step): this
  // step's heads run on it. head_from_: the position that row predicted; head_round_: its step.
  int64_t head_row_ = -1, head_from_ = 0, head_queries_ = 0;  // head_queries_: that forward's T
  uint32_t head_round_ = 0;
  std::vector<std::array<bool, 2>> vcached_;  // per position: a vertical proposal in the cache
  int64_t repair_position_ = -1;           // canonical slot to re-feed (an accepted alternate)
  Tensor probs_, q_tree_, residuals_, zeros_, vcache_q_, positions_, accept_, final_;
  Tensor tokens_;      // u32 [max_q] (read back): each node's token, copied in on the GPU
  Tensor vcache_tok_;  // u32 [2N]: the speculation cache's tokens
  Tensor hidden_;      // f32 [batch rows * max_q, dim]: the last forward's hidden states
  Tensor head_in_;     // f32 [batch rows, dim]: head_row_'s hidden states
  Tensor head_pos_;    // u32 [heads], host-written: each head's target position
  Tensor head_q_, head_tok_;  // f32 [heads, V] / u32 [heads]: each head's proposal
};

}  // namespace vkspec
