#include "engine/ops/elementwise.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void add(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y) {
  require(a.dtype == DType::F32 && b.dtype == DType::F32 && y.dtype == DType::F32, "add", "tensors must be f32");
  require(a.numel() == b.numel() && a.numel() == y.numel(), "add",
          [&] { return "sizes differ: " + a.shape.str() + " + " + b.shape.str() + " -> " + y.shape.str(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& p = ctx.pipeline(shaders::add, {wg});
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(a.numel()), wg);
  struct {
    uint32_t n;
  } push{static_cast<uint32_t>(a.numel())};
  s.dispatch(p, {a, b, y}, push, g.x, g.y);
}

}  // namespace vkspec::ops

namespace vkspec::ops {

void bias_act(CommandStream& s, const TensorView& x, const TensorView& bias, const TensorView& y, Activation act,
              const TensorView& residual) {
  require(x.dtype == DType::F32 && y.dtype == DType::F32, "bias_act", "x and y must be f32");
  require(x.numel() == y.numel() && x.shape.rank >= 1, "bias_act",
          [&] { return "sizes differ: " + x.shape.str() + " -> " + y.shape.str(); });
  const int64_t c = x.shape[x.shape.rank - 1];
  const bool has_bias = bias.buffer != VK_NULL_HANDLE;
  if (has_bias)
    require(bias.dtype == DType::F32 && bias.numel() == c, "bias_act",
            [&] { return "bias " + bias.shape.str() + " does not match the last dimension of " + x.shape.str(); });
  const bool has_residual = residual.buffer != VK_NULL_HANDLE;
  if (has_residual)
    require(residual.dtype == DType::F32 && residual.numel() == x.numel(), "bias_act",
            [&] { return "residual " + residual.shape.str() + " does not match " + x.shape.str(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(x.numel()), wg);
  struct {
    uint32_t n, channels, act, residual;
  } push{static_cast<uint32_t>(x.numel()), has_bias ? static_cast<uint32_t>(c) : 0u, static_cast<uint32_t>(act),
         has_residual ? 1u : 0u};
  s.dispatch(ctx.pipeline(shaders::bias_act, {wg}), {x, has_bias ? bias : x, y, has_residual ? residual : x}, push, g.x,
             g.y);
}

namespace {

void pool_2x2(CommandStream& s, const TensorView& x, const TensorView& y, bool average, const char* op) {
  require(x.dtype == DType::F32 && y.dtype == DType::F32 && x.shape.rank == 4, op,
          [&] { return "x must be f32 [N, H, W, C], got " + x.shape.str(); });
  const Shape want{x.shape[0], x.shape[1] / 2, x.shape[2] / 2, x.shape[3]};
  require(y.shape == want && want.numel() > 0, op,
          [&] { return "y must be " + want.str() + ", got " + y.shape.str(); });
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(y.numel()), wg);
  struct {
    uint32_t n_out, h, w, c, average;
  } push{static_cast<uint32_t>(y.numel()), static_cast<uint32_t>(x.shape[1]), static_cast<uint32_t>(x.shape[2]),
         static_cast<uint32_t>(x.shape[3]), average ? 1u : 0u};
  s.dispatch(ctx.pipeline(shaders::pool_2x2, {wg}), {x, y}, push, g.x, g.y);
}

}  // namespace

void max_pool_2x2(CommandStream& s, const TensorView& x, const TensorView& y) {
  pool_2x2(s, x, y, false, "max_pool_2x2");
}

void avg_pool_2x2(CommandStream& s, const TensorView& x, const TensorView& y) {
  pool_2x2(s, x, y, true, "avg_pool_2x2");
}

}  // namespace vkspec::ops
