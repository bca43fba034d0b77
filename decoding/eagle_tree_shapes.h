#pragma once
// Named static draft-tree shapes: the rank-path lists LANTERN++'s released code draws its static
// tree from (drafters/choices.py of jadohu/LANTERN; the lists EAGLE-1 introduced), besides our own
// `cost` shape (decoding/eagle_tree.h). A path (r_1, ..., r_d) is the node reached by taking the
// rank-r_1 proposal of the root, then the rank-r_2 proposal of that node, and so on.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

enum class EagleShape {
  Cost,           // ours: the `nodes` paths of smallest sum(r_i + 1) within depth and topk
  McSim7b63,      // mc_sim_7b_63: 25 nodes, depth 5, 4 children at the root (the code's CLI default)
  NaiveExtend57,  // naive_extend_57: 57 nodes, depth 5, 5 children at the root (its Python default)
};
EagleShape parse_eagle_shape(const std::string& name);  // "cost" | "mc_sim_7b_63" | "naive_extend_57"
const char* eagle_shape_name(EagleShape s);
std::vector<std::string> eagle_shape_names();

// A named shape's rank paths, parents before children (throws for Cost, which depends on options).
const std::vector<std::vector<int32_t>>& eagle_named_paths(EagleShape s);
// The depth (longest path), the most children of a node (largest rank + 1) and the node count of
// a set of paths: what a named shape fixes of EagleTreeOptions.
struct ShapeExtent {
  int64_t depth = 0, topk = 0, nodes = 0;
};
ShapeExtent eagle_shape_extent(const std::vector<std::vector<int32_t>>& paths);

}  // namespace vkspec
