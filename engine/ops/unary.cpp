#include "engine/ops/unary.h"

#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

void unary_elementwise(CommandStream& s, ShaderId shader, const char* op, const TensorView& x, const TensorView& y) {
  require(x.dtype == DType::F32 && y.dtype == DType::F32, op, "tensors must be f32");
  require(x.numel() == y.numel(), op, [&] { return "sizes differ: " + x.shape.str() + " -> " + y.shape.str(); });
  require(static_cast<uint64_t>(x.numel()) < (1ull << 32), op, [&] { return "tensor too large: " + x.shape.str(); });
  if (x.numel() == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(x.numel()), wg);
  struct {
    uint32_t n;
  } push{static_cast<uint32_t>(x.numel())};
  s.dispatch(ctx.pipeline(shader, {wg}), {x, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops
