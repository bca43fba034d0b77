#pragma once
// Hawk (Chen et al., NeurIPS 2025): lossless speculative decoding with spatial draft heads
// (ModelSet::heads, DraftHeads). At the query that predicted the last committed token, the
// horizontal heads h1..h4 sample the next four tokens of the row; the vertical heads v1, v2 sample
// the tokens one and two rows below, which wait in a speculation cache until decoding reaches
// their position. Each step verifies a candidate tree in one target forward; depth t holds
// candidates for the t-th undecided position, drawn from that position's pool: the horizontal
// head's sample and the cached vertical ones (--directions picks which heads propose).
//   --tree cartesian (the paper's): the Cartesian product of the pools, every node of depth t - 1
//     has the whole pool of depth t as children (vertical candidates first, as the paper's
//     appendix verifies them), cut to a node budget (--nodes, hawk_tree.h); the vertical heads run
//     on every committed row, so every position gets its vertical proposals (the paper's cache).
//   --tree chain (ours, the earlier tree): the horizontal candidate is the primary whose child
//     continues the chain, cached vertical ones are leaf alternates (the first vertical one is the
//     primary where no horizontal head reaches); the heads run on the walk's last row only.
//
// Verification is multi-draft speculative sampling: a node's children are tried in order, child
// i against the residual r_i (r_0 = p, r_{i+1} = norm(max(r_i - q_i, 0))) with its own q; the
// first accepted child continues the walk; when all are rejected (or there are none) the next
// token is drawn from the last residual. Every candidate is an independent sample of the q it is
// tested with (a head's q depends on committed tokens only, so a pool entry shared by the nodes of
// a depth is such a sample under whichever parent the walk reaches), so the output is distributed
// exactly as ar's. All residuals, tests and samples for every node run on the GPU in the step's one
// submit (each node as if the walk reached it); the host reads back a few integers per node and
// walks the tree.
//
// The heads run on the rows the walk committed, at the start of the next step's submit (from a
// copy of the previous forward's hidden states): their tokens go into the candidate tree on the
// GPU (copied into the forward's token ids and the tests' token row) and reach the host with the
// step's read-back. Running them on every node's row in the step that verified the tree, as if
// the walk could end anywhere, cost most of a step.
//
// Nodes beside a depth's first live in scratch KV slots; when the walk accepts such a node, its
// position's canonical slot is re-fed in the next forward (a query whose logits are not used).
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "decoding/candidate_tree.h"
#include "decoding/hawk_tree.h"
#include "decoding/strategy.h"
#include "engine/model/draft_heads.h"

namespace vkspec {

// Which heads propose: horizontal only (Medusa-like), vertical only, or both (the paper's spatial heads).
enum class HawkDirections { Horizontal, Vertical, Both };
HawkDirections parse_hawk_directions(const std::string& name);

struct HawkOptions {
  int64_t depth = 4;  // candidate depths per step (1..4)
  HawkTreeKind tree = HawkTreeKind::Cartesian;
  HawkDirections directions = HawkDirections::Both;
  int64_t nodes = 12;  // node budget besides the root (the chain's most: 3 per depth)
};

// Queries of the largest hawk forward with these options: the root, the most nodes, the repairs.
int64_t hawk_max_queries(const HawkOptions& o);

class HawkStrategy : public Strategy {
 public:
  HawkStrategy(const ModelSet& models, const StrategyInputs& in, const HawkOptions& options);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Candidate {
    int source;    // 0: this step's horizontal proposal (head index in `head`), 1: vertical cache entry
    int head = 0;  // head index (source 0) or cache slot 0/1 (source 1)
  };
  struct Node {
    int32_t parent;    // -1 for the root
    int64_t position;  // image position of the node's token (root: the last committed one)
    int32_t token;     // candidates: known after the step's submit (made on the GPU)
    bool alternate;    // in a scratch slot (not its depth's first node); re-fed when accepted
    int64_t slot;
  };
  struct Tree {
    std::vector<Node> nodes;
    std::vector<Candidate> sources;  // per node (the root's is unused)
    std::vector<bool> shown;         // per node: the first holding its candidate (listed as proposed)
  };
  struct Readback {
    std::vector<uint32_t> accept, final_token;  // per node
  };
  // Records the heads on rows head_rows_ of the previous forward (the last one: every proposing
  // head; the others: the vertical heads) and moves the vertical proposals into the cache.
  void record_heads();
  // Depth t's pool of candidates for position e + t - 1, in the order they are verified.
  std::vector<Candidate> pool(int64_t e, int64_t t) const;
  // The candidate tree from committed position e (shape: hawk_tree.h).
  Tree build_tree(int64_t e) const;
  // The forward's queries: every node sees the committed slots below the root, the root, its
  // ancestors and itself; each repair query (an accepted alternate's canonical slot) what lies below it.
  GptQueries tree_queries(const Tree& tree, int64_t e) const;
  // Gathers each candidate's q row and token (also into the forward's token ids).
  void record_candidates(const Tree& tree, const GptBatch& batch, int64_t e);
  // Every node as if the walk reached it: its children's tests against the running residual,
  // and the token drawn from the residual left when all of them are rejected.
  void record_tests(const Tree& tree, uint32_t round);
  // Walks the accepted path, commits it and the token after it; returns the path's nodes from the
  // root to the node the walk ended on.
  std::vector<int32_t> walk_and_commit(const Tree& tree, const Readback& r, StepEvent& e);

  struct HeadGroup {
    int head;       // head index
    int64_t input;  // which of head_rows_ it reads
  };
  // The heads run on head_rows_: every proposing head on the last row, the vertical ones on the
  // others (cartesian); head_q_/head_tok_ row g holds group g's proposal.
  std::vector<HeadGroup> head_groups() const;

  int64_t W_, cls_;
  HawkOptions opt_;
  bool use_h_, use_v_;
  DraftHeads& heads_;
  TreeTestRows tree_rows_;       // ops::tree_tests' parent and position rows
  std::vector<int> horizontal_;  // head index of h1..h_depth (-1 when absent)
  std::array<int, 2> vertical_{-1, -1};
  // Rows of the previous forward whose nodes the walk committed, the one it ended on last (empty
  // before the first step): this step's heads run on them. head_from_: the position each row
  // predicted; head_round_: their step; head_queries_: that forward's T.
  std::vector<int64_t> head_rows_, head_from_;
  int64_t head_queries_ = 0;
  uint32_t head_round_ = 0;
  std::vector<int> last_group_;               // per head: its group on the last row (-1: not run)
  std::vector<std::array<bool, 2>> vcached_;  // per position: a vertical proposal in the cache
  std::vector<int64_t> repairs_;              // positions whose canonical slot to re-feed (accepted alternates)
  Tensor probs_, q_tree_, residuals_, vcache_q_, accept_, final_;
  Tensor tokens_;             // u32 [max_q] (read back): each node's token, copied in on the GPU
  Tensor vcache_tok_;         // u32 [2N]: the speculation cache's tokens
  Tensor hidden_;             // f32 [batch rows * max_q, dim]: the last forward's hidden states
  Tensor head_in_;            // f32 [head rows * batch rows, dim]: head_rows_' hidden states
  Tensor head_pos_;           // u32 [groups], host-written: each group's target position
  Tensor head_purpose_;       // u32 [groups], host-written: each group's random-number purpose (its head)
  Tensor head_q_, head_tok_;  // f32 [groups, V] / u32 [groups]: each group's proposal
};

}  // namespace vkspec
