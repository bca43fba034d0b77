#include "engine/ops/group_norm.h"

#include <cmath>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void group_norm(CommandStream& s, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                const TensorView& y, const GroupNormParams& params) {
  group_norm(s, x, gamma, beta, y, params, GroupNormKernel{});
}

void group_norm(CommandStream& s, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                const TensorView& y, const GroupNormParams& params, const GroupNormKernel& kernel) {
  const auto what = [&] {
    return "x " + x.shape.str() + ", gamma " + gamma.shape.str() + ", beta " + beta.shape.str() + ", y " +
           y.shape.str() + ", groups " + std::to_string(params.groups);
  };
  require(x.dtype == DType::F32 && gamma.dtype == DType::F32 && beta.dtype == DType::F32 && y.dtype == DType::F32,
          "group_norm", [&] { return "tensors must be f32: " + what(); });
  require(x.shape.rank == 4 && y.shape == x.shape, "group_norm",
          [&] { return "x and y must be the same [N, H, W, C]: " + what(); });
  const int64_t c = x.shape[3], hw = x.shape[1] * x.shape[2];
  require(params.groups >= 1 && c % params.groups == 0, "group_norm",
          [&] { return "C must be a multiple of groups: " + what(); });
  require(gamma.shape.rank == 1 && gamma.shape[0] == c && beta.shape == gamma.shape, "group_norm",
          [&] { return "gamma and beta must be [C]: " + what(); });
  require(x.shape.numel() > 0, "group_norm", [&] { return "empty tensor: " + what(); });
  require(std::isfinite(params.eps) && params.eps >= 0, "group_norm", "eps must be finite and >= 0");
  require(static_cast<uint64_t>(x.numel()) < (1ull << 32), "group_norm",
          [&] { return "tensor too large for 32-bit indexing: " + what(); });
  // In place is fine (each element is read then written by the same invocation); any other
  // overlap is not.
  const bool alias = x.buffer == y.buffer && x.offset == y.offset;
  require(alias || x.buffer != y.buffer || x.offset + x.bytes <= y.offset || y.offset + y.bytes <= x.offset,
          "group_norm", [&] { return "y partially overlaps x: " + what(); });

  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  const bool subgroup = kernel.subgroup_reduce && caps.subgroup_reduce;
  // A power of two (the tree halves it), a multiple of the subgroup size, within the shader's
  // shared array of 1024. CPU drivers run a workgroup's subgroups as coroutines switched at every
  // barrier: one subgroup per workgroup is 4x faster on lavapipe at 32x32x64.
  uint32_t wg = kernel.workgroup_size;
  if (wg == 0) {
    wg = caps.cpu_driver ? 1 : 256;
    while (wg > caps.max_workgroup_invocations) wg /= 2;
    wg = std::max(wg, caps.subgroup_size);
  }
  require((wg & (wg - 1)) == 0 && wg >= caps.subgroup_size && wg <= 1024 && wg <= caps.max_workgroup_invocations,
          "group_norm", [&] {
            return "workgroup size " + std::to_string(wg) + " is not a power of two from the subgroup size to 1024";
          });
  const Pipeline& p = ctx.pipeline(subgroup ? shaders::group_norm : shaders::group_norm_tree, {wg});
  struct {
    uint32_t hw, c, cpg, groups;
    float eps;
    uint32_t swish;
  } push{static_cast<uint32_t>(hw),
         static_cast<uint32_t>(c),
         static_cast<uint32_t>(c / params.groups),
         params.groups,
         params.eps,
         params.swish ? 1u : 0u};
  const uint64_t groups = static_cast<uint64_t>(x.shape[0]) * params.groups;
  require(groups <= caps.max_workgroup_count[0], "group_norm",
          [&] { return "too many (image, group) pairs: " + what(); });
  s.dispatch(p, {x, gamma, beta, y}, push, static_cast<uint32_t>(groups));
}

}  // namespace vkspec::ops
