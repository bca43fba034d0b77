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

RowGrid nhwc_row_grid(const Context& ctx, const TensorView& x, const TensorView& y, uint32_t wg, const char* op,
                      const std::function<std::string()>& what) {
  require(!overlap(x, y), op, [&] { return "y overlaps x: " + what(); });
  require(static_cast<uint64_t>(y.numel()) < (1ull << 32), op, [&] { return "tensor too large: " + what(); });
  const uint64_t rows = static_cast<uint64_t>(x.shape[0] * x.shape[1]),
                 row_elems = static_cast<uint64_t>(x.shape[2] * x.shape[3]);
  const uint64_t gx = (row_elems + wg - 1) / wg;
  require(gx <= ctx.caps().max_workgroup_count[0], op, [&] { return "rows too long: " + what(); });
  return {static_cast<uint32_t>(rows), static_cast<uint32_t>(row_elems), static_cast<uint32_t>(gx),
          static_cast<uint32_t>(std::min<uint64_t>(rows, ctx.caps().max_workgroup_count[1]))};
}

}  // namespace vkspec::ops
