#pragma once
// The target's queries for a candidate tree verified in one forward (hawk, eagle): the root is
// the query fed the last committed token (the condition's at c = 0), every other node is fed its
// candidate at its own KV slot (its position's, or a scratch slot for a depth's later nodes) and
// sees the committed slots, the root, its ancestors and itself; then one repair query per position
// whose accepted candidate sat in a scratch slot last step, re-fed in its own slot.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "decoding/step_event.h"
#include "decoding/target_session.h"
#include "engine/ops/attention_mask.h"
#include "engine/ops/speculative.h"

namespace vkspec {

// Node: any struct with parent (index, -1 for the root), position (image position of its token),
// token and slot. grid: the committed tokens (repairs re-feed them). Appends the queries to q and
// their visibility to mb's first rows (a batch's lane pads the rows after them).
template <typename Node>
void add_candidate_tree_queries(const TargetSession& t, const std::vector<Node>& nodes, int64_t c,
                                const std::vector<int64_t>& repairs, const std::vector<int32_t>& grid, GptQueries& q,
                                ops::AttentionMaskBuilder& mb) {
  const int64_t cls = t.config().cls_token_num, M = static_cast<int64_t>(nodes.size());
  const int64_t root_slot = cls + c - 1;
  for (int64_t i = 0; i < M; ++i) {
    const Node& n = nodes[static_cast<size_t>(i)];
    q.positions.push_back(i == 0 ? root_slot : cls + n.position);
    q.slots.push_back(static_cast<uint32_t>(n.slot));
    if (i > 0 || c > 0) q.tokens.push_back(static_cast<uint32_t>(n.token));
    mb.see_prefix(i, root_slot + 1);
    for (int32_t a = n.parent; a > 0; a = nodes[static_cast<size_t>(a)].parent)
      mb.see(i, nodes[static_cast<size_t>(a)].slot);
    mb.see(i, n.slot);
  }
  // Each repair query sees the slots up to its own (an earlier repair's slot is written in this
  // forward before attention reads it, as a tree node's ancestors are).
  for (size_t r = 0; r < repairs.size(); ++r) {
    const int64_t p = repairs[r];
    q.positions.push_back(cls + p);
    q.slots.push_back(static_cast<uint32_t>(cls + p));
    q.tokens.push_back(static_cast<uint32_t>(grid[static_cast<size_t>(p)]));
    mb.see_prefix(M + static_cast<int64_t>(r), cls + p + 1);
  }
}

template <typename Node>
GptQueries candidate_tree_queries(const TargetSession& t, const std::vector<Node>& nodes, int64_t c,
                                  const std::vector<int64_t>& repairs, const std::vector<int32_t>& grid) {
  GptQueries q;
  ops::AttentionMaskBuilder mb(static_cast<int64_t>(nodes.size() + repairs.size()), t.cache().slots());
  add_candidate_tree_queries(t, nodes, c, repairs, grid, q, mb);
  q.mask = mb.pack();
  q.conditions = t.conditions();
  return q;
}

// The host-written rows ops::tree_tests reads: each node's parent and its (accept, final) Philox
// positions, for trees of up to max_nodes.
struct TreeTestRows {
  TreeTestRows(Context& ctx, int64_t max_nodes, const std::string& owner)
      : parents(ctx.tensor(DType::I32, {max_nodes}, owner + " tree parents", MemoryUsage::Upload)),
        positions(ctx.tensor(DType::U32, {max_nodes, 2}, owner + " tree test positions", MemoryUsage::Upload)) {}
  Tensor parents, positions;
};

// A node's Philox positions in ops::tree_tests: its test as a child (0 for the root) and its next
// token's draw (the position after it), clamped to the image's N tokens.
struct TreeTestPositions {
  uint32_t accept = 0, final_draw = 0;
};
template <typename Node>
TreeTestPositions tree_test_positions(const Node& n, bool root, int64_t N) {
  return {root ? 0u : static_cast<uint32_t>(std::min<int64_t>(n.position, N)),
          static_cast<uint32_t>(std::min<int64_t>(n.position + 1, N))};
}

// Records every multi-draft test of a candidate tree (Node as above; n.position the image position
// of its token) in one dispatch: node p's children tried in index order against its running
// residual, accepted with Philox (seed, child's position, accept_purpose + sibling), p's next
// token drawn from what remains with (seed, p's position + 1, residual_purpose); positions past
// the image clamp to N. t: the dispatch but its parent and positions (rows', written here from
// the nodes) and keys (none: the call's seed); its probs, q, draft (the nodes' tokens), scratch,
// accept and final_token from row 0, cut here to the tree's rows.
template <typename Node>
void record_tree_tests(CommandStream& s, Context& ctx, const std::vector<Node>& nodes, int64_t N, TreeTestRows& rows,
                       const ops::TreeTests& t) {
  const int64_t M = static_cast<int64_t>(nodes.size());
  std::vector<int32_t> parents(static_cast<size_t>(M));
  std::vector<uint32_t> pos(static_cast<size_t>(2 * M));
  for (int64_t i = 0; i < M; ++i) {
    const Node& n = nodes[static_cast<size_t>(i)];
    parents[static_cast<size_t>(i)] = static_cast<int32_t>(n.parent);
    const TreeTestPositions tp = tree_test_positions(n, i == 0, N);
    pos[static_cast<size_t>(2 * i)] = tp.accept;
    pos[static_cast<size_t>(2 * i + 1)] = tp.final_draw;
  }
  ctx.upload(rows.parents, 0, parents.data(), parents.size() * 4);
  ctx.upload(rows.positions, 0, pos.data(), pos.size() * 4);
  ops::TreeTests cut = t;
  for (TensorView* v : {&cut.probs, &cut.q, &cut.draft, &cut.scratch, &cut.accept, &cut.final_token})
    *v = v->rows(0, M);
  cut.parent = rows.parents.view().rows(0, M);
  cut.positions = rows.positions.view().rows(0, M);
  ops::tree_tests(s, cut);
}

// The walk after record_tree_tests: from the root, each node's first accepted child in index
// order, until a node has none. path: node indices, root first; had_children: whether the last
// node of the path had children (all rejected: its next token is a resample, not a bonus).
struct AcceptedPath {
  std::vector<int32_t> path;
  bool had_children = false;
};

template <typename Node>
AcceptedPath accepted_path(const std::vector<Node>& nodes, const std::vector<uint32_t>& accept) {
  const int64_t M = static_cast<int64_t>(nodes.size());
  AcceptedPath a;
  a.path = {0};
  for (int32_t cur = 0;;) {
    int32_t next = -1;
    a.had_children = false;
    for (int64_t c = cur + 1; c < M; ++c) {
      if (nodes[static_cast<size_t>(c)].parent != cur) continue;
      a.had_children = true;
      if (accept[static_cast<size_t>(c)]) {
        next = static_cast<int32_t>(c);
        break;
      }
    }
    if (next < 0) return a;
    a.path.push_back(next);
    cur = next;
  }
}

// What commit_accepted_path committed after the path's nodes.
struct PathCommit {
  int64_t end = 0;              // positions [0, end) are committed
  int64_t bonus_position = -1;  // the token after the walk when it was accepted, not resampled; else -1
  int32_t bonus_token = 0;
};

// The commit of an accepted path (accepted_path's a, over nodes as above): the path's tokens after
// the root into grid and e.accepted; then, unless the walk reached the image's end, the token the
// last node drew from what its tests left (final_token, record_tree_tests' row per node, checked by
// check(token, position)) at the next position: listed as rejected and resampled when that node
// had children, as accepted (a bonus, returned for the caller's proposal lists) when it had none.
// repairs: the path's alternates (nodes in a scratch slot), re-fed in their own slot next step.
template <typename Node, typename Check>
PathCommit commit_accepted_path(const std::vector<Node>& nodes, const AcceptedPath& a,
                                const std::vector<uint32_t>& final_token, Check&& check, std::vector<int32_t>& grid,
                                StepEvent& e, std::vector<int64_t>& repairs) {
  const int64_t N = static_cast<int64_t>(grid.size());
  for (size_t i = 1; i < a.path.size(); ++i) {
    const Node& n = nodes[static_cast<size_t>(a.path[i])];
    grid[static_cast<size_t>(n.position)] = n.token;
    e.accepted.push_back(static_cast<int32_t>(n.position));
  }
  const int32_t last = a.path.back();
  const int64_t f_pos = nodes[static_cast<size_t>(last)].position + 1;
  PathCommit out;
  if (f_pos < N) {
    const int32_t f = check(final_token[static_cast<size_t>(last)], f_pos);
    grid[static_cast<size_t>(f_pos)] = f;
    if (a.had_children) {
      e.rejected.push_back(static_cast<int32_t>(f_pos));
      e.resampled.push_back(static_cast<int32_t>(f_pos));
    } else {
      e.accepted.push_back(static_cast<int32_t>(f_pos));
      out.bonus_position = f_pos;
      out.bonus_token = f;
    }
  }
  out.end = std::min(f_pos + 1, N);
  repairs.clear();
  for (size_t i = 1; i < a.path.size(); ++i)
    if (nodes[static_cast<size_t>(a.path[i])].alternate)
      repairs.push_back(nodes[static_cast<size_t>(a.path[i])].position);
  return out;
}

}  // namespace vkspec
