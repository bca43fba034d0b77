#include "engine/ops/spatial_attention.h"

#include <cmath>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

SpatialAttentionKernel spatial_attention_default_kernel(const Context& ctx) {
  SpatialAttentionKernel k;
  if (ctx.caps().cpu_driver && ctx.caps().subgroup_broadcast) {
    // Larger blocks amortise each (lane-by-lane) load over more FMAs: on lavapipe 8 x 32 runs
    // twice as fast as 4 x 16 (37 vs 72 ms CPU at 16x16, C = 512).
    k.subgroup_kv = true;
    k.queries = 8;
    k.keys = 32;
  }
  // GPUs (measured on an H100: 4.2 ms for 16x16 C64 with 4 x 16 blocks, 64 invocations).
  k.per_query = !ctx.caps().cpu_driver;
  return k;
}

void spatial_attention(CommandStream& s, const TensorView& q, const TensorView& k, const TensorView& v,
                       const TensorView& out, float scale) {
  spatial_attention(s, q, k, v, out, scale, spatial_attention_default_kernel(s.context()));
}

void spatial_attention(CommandStream& s, const TensorView& q, const TensorView& k, const TensorView& v,
                       const TensorView& out, float scale, const SpatialAttentionKernel& kernel) {
  const auto what = [&] {
    return "q " + q.shape.str() + ", k " + k.shape.str() + ", v " + v.shape.str() + ", out " + out.shape.str();
  };
  require(q.dtype == DType::F32 && k.dtype == DType::F32 && v.dtype == DType::F32 && out.dtype == DType::F32,
          "spatial_attention", [&] { return "tensors must be f32: " + what(); });
  require(q.shape.rank >= 2 && q.shape == k.shape && q.shape == v.shape && q.shape == out.shape, "spatial_attention",
          [&] { return "q, k, v and out must share one shape [N, HW, C], [N, H, W, C] or [HW, C]: " + what(); });
  require(q.numel() > 0, "spatial_attention", [&] { return "empty tensors: " + what(); });
  require(!overlap(out, q) && !overlap(out, k) && !overlap(out, v), "spatial_attention",
          [&] { return "out overlaps an input: " + what(); });
  require(static_cast<uint64_t>(q.numel()) < (1ull << 32), "spatial_attention",
          [&] { return "tensors too large: " + what(); });
  require(kernel.queries >= 1 && kernel.queries <= 8 && kernel.keys >= 1 && kernel.keys <= 32, "spatial_attention",
          "kernel blocks out of range");
  const int rank = q.shape.rank;
  const int64_t n = rank == 2 ? 1 : q.shape[0], c = q.shape[rank - 1];
  const int64_t hw = q.numel() / (n * c);
  if (scale <= 0) scale = 1.0f / std::sqrt(static_cast<float>(c));
  require(std::isfinite(scale), "spatial_attention", "scale must be finite");

  Context& ctx = s.context();
  const uint32_t sg = std::max<uint32_t>(ctx.caps().subgroup_size, 1);
  if (kernel.per_query && ctx.caps().subgroup_reduce) {
    // Score arrays in steps of 64 positions: a pipeline per step, not per image size.
    const uint64_t max_hw = (static_cast<uint64_t>(hw) + 63) / 64 * 64;
    const uint32_t wg = std::min(std::max<uint32_t>(64, sg), ctx.caps().max_workgroup_invocations);
    const uint32_t min_sg = std::max<uint32_t>(ctx.caps().min_subgroup_size ? ctx.caps().min_subgroup_size : sg, 1);
    const uint32_t max_subgroups = (wg + min_sg - 1) / min_sg;
    const bool fits = (max_hw + max_subgroups) * 4 <= ctx.caps().max_shared_memory &&
                      hw <= ctx.caps().max_workgroup_count[0] && n <= ctx.caps().max_workgroup_count[1];
    if (fits) {
      const Pipeline& p = ctx.pipeline(shaders::spatial_attention_rows,
                                       {wg, static_cast<uint32_t>(max_hw), max_subgroups});
      struct {
        uint32_t hw, c, query_blocks;
        float scale_log2;
      } push{static_cast<uint32_t>(hw), static_cast<uint32_t>(c), static_cast<uint32_t>(hw),
             scale * 1.4426950408889634f};
      s.dispatch(p, {q, k, v, out}, push, static_cast<uint32_t>(hw), static_cast<uint32_t>(n));
      return;
    }
  }
  // The shared kernel also moves two channels per 64-bit access.
  const bool aligned = c % 2 == 0 && q.offset % 8 == 0 && k.offset % 8 == 0 && v.offset % 8 == 0 && out.offset % 8 == 0;
  const bool shared = kernel.subgroup_kv && ctx.caps().subgroup_broadcast && ctx.caps().shader_int64 && aligned;
  // Whole subgroups, for the broadcasts. A CPU driver runs each workgroup on one thread and 16x16
  // positions make only 32 query blocks: one subgroup per workgroup there.
  const uint32_t wg = ctx.caps().cpu_driver ? sg : std::max<uint32_t>(32, sg);
  const ShaderId shader = shared ? shaders::spatial_attention_shared : shaders::spatial_attention;
  const Pipeline& p = ctx.pipeline(shader, {wg, kernel.queries, kernel.keys, sg});
  struct {
    uint32_t hw, c, query_blocks;
    float scale_log2;
  } push{static_cast<uint32_t>(hw), static_cast<uint32_t>(c), ceil_div(static_cast<uint64_t>(hw), kernel.queries),
         scale * 1.4426950408889634f};
  const uint32_t gx = ceil_div(push.query_blocks, wg);
  require(gx <= ctx.caps().max_workgroup_count[0] && n <= ctx.caps().max_workgroup_count[1], "spatial_attention",
          [&] { return "grid exceeds the device's workgroup count limits: " + what(); });
  s.dispatch(p, {q, k, v, out}, push, gx, static_cast<uint32_t>(n));
}

}  // namespace vkspec::ops
