#pragma once
// The draft tree of EAGLE-2 (Li et al., EMNLP 2024, "EAGLE-2: Faster Inference of Language Models
// with Dynamic Draft Trees") apart from the GPU: which candidates a drafted tree keeps, level by
// level, from the drafter's distributions. Pure, so the tests check shapes without a device.
//
// A node's value is the product of the draft probabilities along its path (EAGLE-2's estimate of
// its acceptance). Every expanded node proposes its `topk` most likely tokens as children.
//   dynamic (EAGLE-2): each level expands the `topk` nodes of the newest depth with the highest
//     value; the final tree is the `nodes` candidates of highest value over all depths (a node's
//     ancestors always with it).
//   static (LANTERN++, Park et al. 2025: a fixed tree, so low draft confidence never prunes it):
//     the shape is fixed in advance as rank paths (r_1, ..., r_d), r_i the rank of the token among
//     its parent's proposals; ours is the `nodes` paths of largest prior prod_i 2^-(r_i + 1), i.e.
//     of smallest sum of (r_i + 1), ties to the shorter, then lexicographically smaller path
//     (shape `cost`); or a named list of the released code's (decoding/eagle_tree_shapes.h), which
//     fixes depth, topk and nodes.
//   chain: the static tree of one path, each node's most likely token (depth nodes).
#include <cstdint>
#include <string>
#include <vector>

#include "decoding/eagle_tree_shapes.h"

namespace vkspec {

enum class EagleTreeKind { Dynamic, Static, Chain };
EagleTreeKind parse_eagle_tree_kind(const std::string& name);  // "dynamic" | "static" | "chain"
const char* eagle_tree_kind_name(EagleTreeKind k);

struct EagleTreeOptions {
  EagleTreeKind kind = EagleTreeKind::Dynamic;
  int64_t depth = 6;                    // drafted levels below the root
  int64_t topk = 10;                    // proposals per expanded node, and nodes expanded per level (dynamic)
  int64_t nodes = 60;                   // candidates verified besides the root
  EagleShape shape = EagleShape::Cost;  // static trees: whose rank paths (a named one sets the three above)
};

struct DraftTreeNode {
  int32_t parent = -1;  // -1 for the root
  int32_t depth = 0;    // 0 for the root
  int32_t rank = -1;    // its token's rank among the parent's proposals (0: the most likely)
  uint32_t token = 0;
  // Product of the draft probabilities along the path, in f32 with products below FLT_MIN taken as
  // 0, so the device growing a dynamic tree (ops::draft_tree_level) computes the same bits.
  float value = 1.0f;
};

// The `cost` shape's rank paths, parents before children.
std::vector<std::vector<int32_t>> eagle_static_paths(int64_t depth, int64_t topk, int64_t nodes);
// The static tree's rank paths: the named shape's, or the cost shape's for o's depth, topk, nodes.
std::vector<std::vector<int32_t>> eagle_shape_paths(const EagleTreeOptions& o);
// The most nodes one level expands (the drafter's queries per level), and the most a tree
// expands in all, the root included (the drafter's scratch slots and stored features).
int64_t eagle_max_frontier(const EagleTreeOptions& o);
int64_t eagle_max_expanded(const EagleTreeOptions& o);

class DraftTreeBuilder {
 public:
  // max_depth: the most levels the image has room for (positions left); the tree uses the smaller
  // of it and options.depth. Node 0 is the root.
  DraftTreeBuilder(const EagleTreeOptions& options, int64_t max_depth);

  const std::vector<DraftTreeNode>& nodes() const { return nodes_; }
  int64_t depth() const { return depth_; }
  // Adds `parent`'s children from its draft distribution q[0 .. V): its most likely tokens with
  // q > 0 (ties to the smaller id), at most topk, those the tree kind keeps.
  void add_children(int32_t parent, const float* q, int64_t V);
  // The same from the parent's top tokens in rank order and their q (ops::top_tokens' row:
  // kNoToken and 0 past the mass), at least min(topk, V) of them.
  void add_children(int32_t parent, const uint32_t* tokens, const float* q, int64_t k);
  // Sampled candidates (static and chain shapes): the children the shape gives `parent`, ranks 0,
  // 1, ... in the order they are verified, with token 0 in place of the tokens the GPU draws
  // independently from the parent's q (they may repeat). The shape alone fixes which nodes exist
  // and select() keeps them all, so the tree is known before any token is.
  void add_shape_children(int32_t parent);
  // The nodes the drafter runs on next (children come from their distributions), at most topk;
  // empty when the tree has its last level.
  std::vector<int32_t> frontier() const;
  // The verified tree: node ids, root first, breadth first with siblings by rank, at most
  // options.nodes besides the root, every node's parent before it.
  std::vector<int32_t> select() const;

 private:
  bool in_static_shape(int32_t parent, int32_t rank) const;
  int64_t shape_children(int32_t parent) const;
  std::vector<int32_t> path_of(int32_t node) const;

  EagleTreeOptions o_;
  int64_t depth_;
  std::vector<DraftTreeNode> nodes_;
  std::vector<std::vector<int32_t>> shape_;  // static and chain: the rank paths kept
  int32_t level_ = 0;                        // depth of the nodes frontier() offers (0: the root)
};

}  // namespace vkspec
