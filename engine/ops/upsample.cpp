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
  require(x.buffer != y.buffer || x.offset + x.bytes <= y.offset || y.offset + y.bytes <= x.offset,
          "upsample_nearest_2x", [&] { return "y overlaps x: " + what(); });
  require(static_cast<uint64_t>(y.numel()) < (1ull << 32), "upsample_nearest_2x",
          [&] { return "tensor too large: " + what(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const uint64_t rows = static_cast<uint64_t>(x.shape[0] * x.shape[1]),
                 row_elems = static_cast<uint64_t>(x.shape[2] * x.shape[3]);
  const uint64_t gx = (row_elems + wg - 1) / wg;
  require(gx <= ctx.caps().max_workgroup_count[0], "upsample_nearest_2x", [&] { return "rows too long: " + what(); });
  const uint32_t gy = static_cast<uint32_t>(std::min<uint64_t>(rows, ctx.caps().max_workgroup_count[1]));
  struct {
    uint32_t rows, row_elems, c;
  } push{static_cast<uint32_t>(rows), static_cast<uint32_t>(row_elems), static_cast<uint32_t>(x.shape[3])};
  s.dispatch(ctx.pipeline(shaders::upsample_nearest_2x, {wg}), {x, y}, push, static_cast<uint32_t>(gx), gy);
}

}  // namespace vkspec::ops
