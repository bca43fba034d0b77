#include "engine/ops/upsample.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void upsample_nearest_2x(CommandStream& s, const TensorView& x, const TensorView& y) {
  const auto what = [&] { return "x " + x.shape.str() + " -> y " + y.shape.str(); };
  require(x.dtype == DType::F32 && y.dtype == DType::F32, "upsample_nearest_2x",
          [&] { return "tensors must be f32: " + what(); });
  require(x.shape.rank == 4 && x.numel() > 0, "upsample_nearest_2x",
          [&] { return "x must be a non-empty [N, H, W, C]: " + what(); });
  const Shape want{x.shape[0], 2 * x.shape[1], 2 * x.shape[2], x.shape[3]};
  require(y.shape == want, "upsample_nearest_2x", [&] { return "y must be " + want.str() + ": " + what(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const RowGrid g = nhwc_row_grid(ctx, x, y, wg, "upsample_nearest_2x", what);
  struct {
    uint32_t rows, row_elems, c;
  } push{g.rows, g.row_elems, static_cast<uint32_t>(x.shape[3])};
  s.dispatch(ctx.pipeline(shaders::upsample_nearest_2x, {wg}), {x, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops
