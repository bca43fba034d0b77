#include "engine/ops/swiglu.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

struct Push {
  uint32_t rows, hidden, a_stride, a_offset, b_stride, b_offset;
};

void record(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y, const Push& push,
            bool gelu_gate = false) {
  Context& ctx = s.context();
  const uint64_t n = static_cast<uint64_t>(push.rows) * push.hidden;
  if (n == 0) return;
  require(static_cast<uint64_t>(push.rows) * std::max(push.a_stride, push.b_stride) <= 0xffffffffu, "swiglu",
          [&] { return "too many elements for 32-bit indexing: " + y.shape.str(); });
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, n, wg);
  s.dispatch(ctx.pipeline(shaders::swiglu, {wg, gelu_gate ? 1u : 0u}), {a, b, y}, push, g.x, g.y);
}

}  // namespace

void swiglu(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y) {
  require(a.dtype == DType::F32 && b.dtype == DType::F32 && y.dtype == DType::F32, "swiglu", "tensors must be f32");
  require(a.shape == b.shape && a.numel() == y.numel() && a.shape.rank >= 1, "swiglu",
          [&] { return "shapes differ: silu(" + a.shape.str() + ") * " + b.shape.str() + " -> " + y.shape.str(); });
  const int64_t hidden = a.shape[a.shape.rank - 1];
  const uint32_t h = static_cast<uint32_t>(hidden);
  record(s, a, b, y, {static_cast<uint32_t>(hidden ? a.numel() / hidden : 0), h, h, 0, h, 0});
}

namespace {

void gated_fused(CommandStream& s, const char* op, const TensorView& ab, const TensorView& y, bool gelu_gate) {
  require(ab.dtype == DType::F32 && y.dtype == DType::F32, op, "tensors must be f32");
  require(ab.shape.rank == 2 && y.shape.rank == 2 && ab.shape[0] == y.shape[0] && ab.shape[1] == 2 * y.shape[1], op,
          [&] {
            return "expected ab [rows, 2 * hidden] and y [rows, hidden], got " + ab.shape.str() + " -> " +
                   y.shape.str();
          });
  require(ab.buffer != y.buffer || ab.offset + ab.bytes <= y.offset || y.offset + y.bytes <= ab.offset, op,
          "y must not overlap ab");
  const uint32_t h = static_cast<uint32_t>(y.shape[1]);
  record(s, ab, ab, y, {static_cast<uint32_t>(y.shape[0]), h, 2 * h, 0, 2 * h, h}, gelu_gate);
}

}  // namespace

void swiglu_fused(CommandStream& s, const TensorView& ab, const TensorView& y) {
  gated_fused(s, "swiglu_fused", ab, y, false);
}

void geglu_fused(CommandStream& s, const TensorView& ab, const TensorView& y) {
  gated_fused(s, "geglu_fused", ab, y, true);
}

}  // namespace vkspec::ops
