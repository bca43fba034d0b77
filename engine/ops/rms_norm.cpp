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
          "weight " + weight.shape.str() + " does not match the last dim of x " + x.shape.str());
  require(x.numel() == y.numel(), op, "x " + x.shape.str() + " and y " + y.shape.str() + " differ in size");
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

// One subgroup per row; the grid strides over rows (see the shaders).
Grid row_grid(Context& ctx, int64_t rows, uint32_t wg) {
  const uint32_t per_group = std::max<uint32_t>(1, wg / std::max<uint32_t>(ctx.caps().max_subgroup_size, 1));
  return grid_1d(ctx, static_cast<uint64_t>(rows), per_group);
}

}  // namespace

void rms_norm(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& y, float eps) {
  Context& ctx = s.context();
  const int64_t rows = check_shapes("rms_norm", x, weight, y, eps, ctx);
  if (rows == 0) return;
  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& p = ctx.pipeline(shaders::rms_norm, {wg, weight.dtype == DType::F16 ? 1u : 0u});
  const Grid g = row_grid(ctx, rows, wg);
  s.dispatch(p, {x, weight, y}, Push{static_cast<uint32_t>(rows), static_cast<uint32_t>(weight.shape[0]), eps}, g.x,
             g.y);
}

void add_rms_norm(CommandStream& s, const TensorView& x, const TensorView& delta, const TensorView& weight,
                  const TensorView& y, float eps) {
  const char* op = "add_rms_norm";
  Context& ctx = s.context();
  const int64_t rows = check_shapes(op, x, weight, y, eps, ctx);
  require(delta.dtype == DType::F32 && delta.numel() == x.numel(), op,
          "delta must be f32 of the size of x " + x.shape.str() + ", got " + delta.shape.str());
  require(!overlap(x, y) && !overlap(x, delta), op, "y and delta must not overlap x");
  if (rows == 0) return;
  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& p = ctx.pipeline(shaders::add_rms_norm, {wg, weight.dtype == DType::F16 ? 1u : 0u});
  const Grid g = row_grid(ctx, rows, wg);
  s.dispatch(p, {x, delta, weight, y}, Push{static_cast<uint32_t>(rows), static_cast<uint32_t>(weight.shape[0]), eps},
             g.x, g.y);
}

}  // namespace vkspec::ops
