#include "engine/ops/elementwise.h"

#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

void add(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y) {
  require(a.dtype == DType::F32 && b.dtype == DType::F32 && y.dtype == DType::F32, "add", "tensors must be f32");
  require(a.numel() == b.numel() && a.numel() == y.numel(), "add",
          "sizes differ: " + a.shape.str() + " + " + b.shape.str() + " -> " + y.shape.str());
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& p = ctx.pipeline("add", {wg});
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(a.numel()), wg);
  struct {
    uint32_t n;
  } push{static_cast<uint32_t>(a.numel())};
  s.dispatch(p, {a, b, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops
