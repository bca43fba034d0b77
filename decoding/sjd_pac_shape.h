#pragma once
// The shape of an SJD-PAC step's tree (sjd_pac_strategy.h states the method) apart from the GPU:
// SjdPacImage builds its trees on it and option checks count its nodes. Pure, so tests check
// shapes without a device.
#include <cstdint>
#include <vector>

namespace vkspec {

// (K^D - 1) / (K - 1): the tree's nodes with the root (D for K = 1).
int64_t sjd_pac_tree_nodes(int64_t width, int64_t depth);

// The shape of one step's tree from the number of candidates of each candidate depth (pools[t]
// for depth t + 1, <= K) and the chain after it: nodes in breadth-first order, the main path (the
// branch-0 path, then the chain) canonical.
struct SjdPacNode {
  int32_t parent;   // -1 for the root
  int32_t depth;    // 0 for the root
  int32_t pick;     // the candidate's index at its position (0: the main path's)
  bool canonical;   // on the main path: the position's own KV slot
  bool first_pick;  // the first node holding this (depth, pick): listed once as proposed
};
std::vector<SjdPacNode> sjd_pac_shape(const std::vector<int>& pools, int64_t chain);

}  // namespace vkspec
