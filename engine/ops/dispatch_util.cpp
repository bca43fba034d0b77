#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

Grid grid_1d(const Context& ctx, uint64_t n, uint32_t wg) {
  const uint64_t groups = (n + wg - 1) / wg;
  const uint64_t max_x = ctx.caps().max_workgroup_count[0];
  Grid g;
  if (groups <= max_x) {
    g.x = static_cast<uint32_t>(std::max<uint64_t>(groups, 1));
  } else {
    g.x = static_cast<uint32_t>(max_x);
    g.y = static_cast<uint32_t>((groups + max_x - 1) / max_x);
  }
  return g;
}

}  // namespace vkspec::ops
