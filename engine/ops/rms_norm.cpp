#include "engine/ops/rms_norm.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

void rms_norm(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& y, float eps) {
  const char* op = "rms_norm";
  require(x.dtype == DType::F32 && y.dtype == DType::F32, op, "x and y must be f32");
  require(weight.dtype == DType::F32 || weight.dtype == DType::F16, op, "weight must be f32 or f16");
  require(weight.shape.rank == 1 && x.shape.rank >= 1 && weight.shape[0] == x.shape[x.shape.rank - 1], op,
          "weight " + weight.shape.str() + " does not match the last dim of x " + x.shape.str());
  require(x.numel() == y.numel(), op, "x " + x.shape.str() + " and y " + y.shape.str() + " differ in size");
  require(eps >= 0, op, "eps must be >= 0");
  Context& ctx = s.context();
  require(ctx.caps().subgroup_arithmetic && ctx.caps().subgroup_in_compute, op,
          "device lacks subgroup arithmetic in compute shaders");
  const int64_t dim = weight.shape[0];
  const int64_t rows = x.numel() / std::max<int64_t>(dim, 1);
  if (rows == 0 || dim == 0) return;
  const uint32_t wg = ctx.default_workgroup_size();
  const uint32_t per_group = std::max<uint32_t>(1, wg / std::max<uint32_t>(ctx.caps().max_subgroup_size, 1));
  const Pipeline& p = ctx.pipeline("rms_norm", {wg, weight.dtype == DType::F16 ? 1u : 0u});
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(rows), per_group);
  struct {
    uint32_t rows, dim;
    float eps;
  } push{static_cast<uint32_t>(rows), static_cast<uint32_t>(dim), eps};
  s.dispatch(p, {x, weight, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops
