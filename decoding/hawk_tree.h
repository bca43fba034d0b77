#pragma once
// The shape of Hawk's candidate tree (hawk_strategy.*) apart from the GPU: which node is whose
// child and which entry of its depth's candidate pool each node holds, given the pool sizes, the
// tree kind and a node budget. Pure, so the tests check shapes without a device.
//
// cartesian (Chen et al. 2025, "the candidate tree is generated using the Cartesian product of the
// sampling results from the sampling pool at each speculation position"): every node of depth t - 1
// has every entry of pool t as a child, so depth t holds prod_{j<=t} |pool_j| nodes. Built breadth
// first in pool order until the budget is spent: a depth that does not fit whole is cut after its
// first parents' children (they follow the pools' first entries, the candidates verified first).
// chain (ours, the earlier vkspec tree): pool entry 0 of each depth is the primary, the child of
// the previous primary; the other entries are leaf alternates beside it.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

enum class HawkTreeKind { Cartesian, Chain };
HawkTreeKind parse_hawk_tree_kind(const std::string& name);  // "cartesian" | "chain"

struct HawkTreeNode {
  int32_t parent;   // -1 for the root
  int32_t depth;    // 0 for the root
  int32_t pick;     // index into the pool of its depth (-1 for the root)
  bool canonical;   // the first node of its depth: it may use the position's own KV slot
  bool first_pick;  // the first node holding this (depth, pick): listed once as a proposal
};

// pools[t - 1]: the number of candidates at depth t; the tree ends at the first empty pool.
// budget: the most nodes besides the root (>= 1). Nodes are in breadth-first order, parents first.
std::vector<HawkTreeNode> hawk_tree_shape(HawkTreeKind kind, const std::vector<int>& pools, int64_t budget);

// The most nodes besides the root that a tree can have: cartesian prod-sums of `pool` per depth,
// chain `pool` per depth; capped by budget. What sizes the forward.
int64_t hawk_tree_max_nodes(HawkTreeKind kind, int64_t depth, int pool, int64_t budget);

}  // namespace vkspec
