#include "engine/ops/pixel_shuffle.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void pixel_shuffle(CommandStream& s, const TensorView& x, const TensorView& y, int64_t r) {
  const auto what = [&] { return "x " + x.shape.str() + " -> y " + y.shape.str() + ", r " + std::to_string(r); };
  require(r >= 1 && r <= 16, "pixel_shuffle", [&] { return "r must be 1..16: " + what(); });
  require(x.dtype == DType::F32 && y.dtype == DType::F32, "pixel_shuffle",
          [&] { return "tensors must be f32: " + what(); });
  require(x.shape.rank == 4 && x.numel() > 0, "pixel_shuffle",
          [&] { return "x must be a non-empty [N, H, W, C r^2]: " + what(); });
  require(x.shape[3] % (r * r) == 0, "pixel_shuffle",
          [&] { return "x's channels must be a multiple of r^2: " + what(); });
  const Shape want{x.shape[0], r * x.shape[1], r * x.shape[2], x.shape[3] / (r * r)};
  require(y.shape == want, "pixel_shuffle", [&] { return "y must be " + want.str() + ": " + what(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const RowGrid g = nhwc_row_grid(ctx, x, y, wg, "pixel_shuffle", what);
  struct {
    uint32_t rows, row_elems, c, r;
  } push{g.rows, g.row_elems, static_cast<uint32_t>(want[3]), static_cast<uint32_t>(r)};
  s.dispatch(ctx.pipeline(shaders::pixel_shuffle, {wg}), {x, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops
