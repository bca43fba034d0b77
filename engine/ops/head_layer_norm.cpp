#include "engine/ops/head_layer_norm.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void head_layer_norm(CommandStream& s, const HeadRows& x, const TensorView& weight, const TensorView& bias, float eps) {
  const char* op = "head_layer_norm";
  Context& ctx = s.context();
  x.validate(op, "x");
  for (const TensorView* t : {&weight, &bias})
    require(t->dtype == DType::F32 && t->shape.rank == 2 && t->shape[1] == x.head_dim && t->shape[0] >= 1 &&
                x.heads % t->shape[0] == 0,
            op, [&] {
              return "weight and bias must be f32 [groups, " + std::to_string(x.head_dim) +
                     "] with groups dividing the " + std::to_string(x.heads) + " heads, got " + t->shape.str();
            });
  require(weight.shape == bias.shape, op, "weight and bias differ in shape");
  require(eps > 0, op, "eps must be > 0");
  require(ctx.caps().subgroup_arithmetic && ctx.caps().subgroup_in_compute, op,
          "device lacks subgroup arithmetic in compute shaders");
  struct {
    uint32_t tokens, heads, head_dim, row_stride, col_offset, heads_per_group;
    float eps;
  } push{static_cast<uint32_t>(x.tokens),
         static_cast<uint32_t>(x.heads),
         static_cast<uint32_t>(x.head_dim),
         static_cast<uint32_t>(x.row_stride),
         static_cast<uint32_t>(x.col_offset),
         static_cast<uint32_t>(x.heads / weight.shape[0]),
         eps};
  const uint32_t wg = ctx.default_workgroup_size();
  const uint32_t per_group = std::max<uint32_t>(1, wg / std::max<uint32_t>(ctx.caps().max_subgroup_size, 1));
  const Grid grid = grid_1d(ctx, static_cast<uint64_t>(x.tokens * x.heads), per_group);
  s.dispatch(ctx.pipeline(shaders::head_layer_norm, {wg}), {x.data, weight, bias}, push, grid.x, grid.y);
}

}  // namespace vkspec::ops
