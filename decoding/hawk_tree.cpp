#include "decoding/hawk_tree.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {

HawkTreeKind parse_hawk_tree_kind(const std::string& name) {
  if (name == "cartesian") return HawkTreeKind::Cartesian;
  if (name == "chain") return HawkTreeKind::Chain;
  throw Error("hawk: unknown tree '" + name + "' (expected cartesian or chain)");
}

std::vector<HawkTreeNode> hawk_tree_shape(HawkTreeKind kind, const std::vector<int>& pools, int64_t budget) {
  if (budget < 1) throw Error("hawk: node budget must be at least 1, got " + std::to_string(budget));
  std::vector<HawkTreeNode> nodes = {{-1, 0, -1, true, true}};
  std::vector<int32_t> frontier = {0};  // the parents of the next depth
  for (size_t t = 0; t < pools.size() && pools[t] > 0; ++t) {
    const int32_t depth = static_cast<int32_t>(t + 1);
    std::vector<int32_t> next;
    // chain: only the primary (next[0]) has children; cartesian: every node of the depth.
    const size_t parents = kind == HawkTreeKind::Chain ? 1 : frontier.size();
    for (size_t i = 0; i < parents; ++i)
      for (int pick = 0; pick < pools[t]; ++pick) {
        if (static_cast<int64_t>(nodes.size()) - 1 >= budget) return nodes;
        next.push_back(static_cast<int32_t>(nodes.size()));
        nodes.push_back({frontier[i], depth, pick, next.size() == 1, i == 0});
      }
    frontier = std::move(next);
  }
  return nodes;
}

int64_t hawk_tree_max_nodes(HawkTreeKind kind, int64_t depth, int pool, int64_t budget) {
  int64_t total = 0, width = 1;
  for (int64_t t = 0; t < depth && total < budget; ++t) {
    width = kind == HawkTreeKind::Chain ? pool : width * pool;
    total += width;
  }
  return std::min(total, budget);
}

}  // namespace vkspec
