#include "engine/ops/rms_norm.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

namespace {

// Checks what both variants need; returns the rows (0: nothing to do).
int64_t check_shapes(const char* op, const TensorView& x, const TensorView& weight, const TensorView& y, float eps,
                     Context& ctx) {
  require(x.dtype == DType::F32 && y.dtype == DType::F32, op, "x and y must be f32");
  require(weight.dtype == DType::F32 || weight.dtype == DType::F16, op, "weight must be f32 or f16");
  require(weight.shape.rank == 1 && x.shape.rank >= 1 && weight.shape[0] == x.shape[x.shape.rank - 1], op,
          [&] { return "weight " + weight.shape.str() + " does not match the last dim of x " + x.shape.str(); });
  require(x.numel() == y.numel(), op,
          [&] { return "x " + x.shape.str() + " and y " + y.shape.str() + " differ in size"; });
  require(eps >= 0, op, "eps must be >= 0");
  require(ctx.caps().subgroup_arithmetic && ctx.caps().subgroup_in_compute, op,
          "device lacks subgroup arithmetic in compute shaders");
  const int64_t dim = weight.shape[0];
  return dim == 0 ? 0 : x.numel() / dim;
}

struct Push {
  uint32_t rows, dim;
  float eps;
};

// How the shaders split rows: on a CPU device one subgroup per row, on a GPU one workgroup per
// row (a lone subgroup walking a long row is latency-bound there); the grid strides over rows.
struct RowLayout {
  uint32_t wg;
  bool row_per_workgroup;
  uint32_t max_subgroups;
  Grid grid;
};

RowLayout row_layout(Context& ctx, int64_t rows) {
  const DeviceCaps& caps = ctx.caps();
  RowLayout l;
  l.wg = ctx.default_workgroup_size();
  l.row_per_workgroup = !caps.cpu_driver;
  l.max_subgroups = max_subgroups_in(caps, l.wg);
  const uint32_t per_group =
      l.row_per_workgroup ? 1 : std::max<uint32_t>(1, l.wg / std::max<uint32_t>(caps.max_subgroup_size, 1));
  l.grid = grid_1d(ctx, static_cast<uint64_t>(rows), per_group);
  return l;
}

}  // namespace

void rms_norm(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& y, float eps) {
  Context& ctx = s.context();
  const int64_t rows = check_shapes("rms_norm", x, weight, y, eps, ctx);
  if (rows == 0) return;
  const RowLayout l = row_layout(ctx, rows);
  const Pipeline& p = ctx.pipeline(shaders::rms_norm, {l.wg, weight.dtype == DType::F16 ? 1u : 0u,
                                                       l.row_per_workgroup ? 1u : 0u, l.max_subgroups});
  s.dispatch(p, {x, weight, y}, Push{static_cast<uint32_t>(rows), static_cast<uint32_t>(weight.shape[0]), eps},
             l.grid.x, l.grid.y);
}

}  // namespace vkspec::ops
