#include "decoding/sjd_pac_shape.h"

#include <limits>

#include "decoding/hawk_tree.h"

namespace vkspec {

int64_t sjd_pac_tree_nodes(int64_t width, int64_t depth) {
  int64_t nodes = 0, level = 1;
  for (int64_t d = 0; d < depth; ++d, level *= width) nodes += level;
  return nodes;
}

std::vector<SjdPacNode> sjd_pac_shape(const std::vector<int>& pools, int64_t chain) {
  std::vector<SjdPacNode> nodes;
  for (const HawkTreeNode& h : hawk_tree_shape(HawkTreeKind::Cartesian, pools, std::numeric_limits<int64_t>::max()))
    nodes.push_back({h.parent, h.depth, h.pick, h.canonical, h.first_pick});
  int32_t last = 0;  // the deepest main-path node: the chain continues it
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].canonical) last = static_cast<int32_t>(i);
  for (int64_t t = 0; t < chain; ++t) {
    nodes.push_back({last, nodes[static_cast<size_t>(last)].depth + 1, 0, true, true});
    last = static_cast<int32_t>(nodes.size() - 1);
  }
  return nodes;
}

}  // namespace vkspec
