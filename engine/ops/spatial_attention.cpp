#include "engine/ops/spatial_attention.h"

#include <cmath>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

SpatialAttentionKernel spatial_attention_default_kernel(const Context& ctx) {
  SpatialAttentionKernel k;
  if (ctx.caps().cpu_driver && ctx.caps().subgroup_lane_reads) {
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

namespace {

// The per-query kernel's workgroup and score array (positions in steps of 64: a pipeline per
// step, not per image size).
struct PerQueryPlan {
  uint32_t wg, max_hw, max_subgroups;
};

PerQueryPlan per_query_plan(const Context& ctx, int64_t hw) {
  const DeviceCaps& caps = ctx.caps();
  PerQueryPlan p;
  p.wg = std::min(std::max<uint32_t>(64, std::max<uint32_t>(caps.subgroup_size, 1)), caps.max_workgroup_invocations);
  p.max_hw = static_cast<uint32_t>((hw + 63) / 64 * 64);
  p.max_subgroups = max_subgroups_in(caps, p.wg);
  return p;
}

}  // namespace

bool spatial_attention_per_query(const Context& ctx, int64_t n, int64_t hw, const SpatialAttentionKernel& kernel) {
  const DeviceCaps& caps = ctx.caps();
  if (!kernel.per_query || !caps.subgroup_reduce) return false;
  const PerQueryPlan p = per_query_plan(ctx, hw);
  return (uint64_t{p.max_hw} + p.max_subgroups) * 4 <= caps.max_shared_memory && hw <= caps.max_workgroup_count[0] &&
         n <= caps.max_workgroup_count[1];
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
  struct {
    uint32_t hw, c, query_blocks;
    float scale_log2;
  } push{static_cast<uint32_t>(hw), static_cast<uint32_t>(c), static_cast<uint32_t>(hw), scale * 1.4426950408889634f};
  if (spatial_attention_per_query(ctx, n, hw, kernel)) {  // a workgroup per query
    const PerQueryPlan pq = per_query_plan(ctx, hw);
    const Pipeline& p = ctx.pipeline(shaders::spatial_attention_rows, {pq.wg, pq.max_hw, pq.max_subgroups});
    s.dispatch(p, {q, k, v, out}, push, static_cast<uint32_t>(hw), static_cast<uint32_t>(n));
    return;
  }
  // The shared kernel also moves two channels per 64-bit access.
  const bool aligned = c % 2 == 0 && q.offset % 8 == 0 && k.offset % 8 == 0 && v.offset % 8 == 0 && out.offset % 8 == 0;
  const bool shared = kernel.subgroup_kv && ctx.caps().subgroup_lane_reads && ctx.caps().shader_int64 && aligned;
  // Whole subgroups, for the broadcasts. A CPU driver runs each workgroup on one thread and 16x16
  // positions make only 32 query blocks: one subgroup per workgroup there.
  const uint32_t wg = ctx.caps().cpu_driver ? sg : std::max<uint32_t>(32, sg);
  const ShaderId shader = shared ? shaders::spatial_attention_shared : shaders::spatial_attention;
  const Pipeline& p = ctx.pipeline(shader, {wg, kernel.queries, kernel.keys, sg});
  push.query_blocks = ceil_div(static_cast<uint64_t>(hw), kernel.queries);
  const uint32_t gx = ceil_div(push.query_blocks, wg);
  require(gx <= ctx.caps().max_workgroup_count[0] && n <= ctx.caps().max_workgroup_count[1], "spatial_attention",
          [&] { return "grid exceeds the device's workgroup count limits: " + what(); });
  s.dispatch(p, {q, k, v, out}, push, gx, static_cast<uint32_t>(n));
}

}  // namespace vkspec::ops
