#include <cmath>

#include "engine/checks/op_check.h"
#include "engine/ops/spatial_attention.h"
#include "engine/ref/spatial_attention_ref.h"

namespace vkspec {
namespace {

// kernel: nullptr = the op's choice for the device. spread scales q: larger gives peakier
// softmax rows (trained attention is far from uniform).
CheckResult check_attn(Context& ctx, int64_t n, int64_t h, int64_t w, int64_t c, float spread,
                       const ops::SpatialAttentionKernel* kernel = nullptr, double tolerance = 2e-6) {
  const int64_t hw = h * w;
  const size_t count = static_cast<size_t>(n * hw * c);
  const auto q = random_floats(count, 51, -spread, spread), k = random_floats(count, 52), v = random_floats(count, 53);
  const Shape shape{n, h, w, c};
  Tensor tq = upload_floats(ctx, q, DType::F32, shape, "q"), tk = upload_floats(ctx, k, DType::F32, shape, "k");
  Tensor tv = upload_floats(ctx, v, DType::F32, shape, "v");
  // Start from NaN: the op must never read the output before writing it.
  Tensor to = upload_floats(ctx, std::vector<float>(count, NAN), DType::F32, shape, "out");
  CommandStream s(ctx);
  if (kernel)
    ops::spatial_attention(s, tq, tk, tv, to, 0.0f, *kernel);
  else
    ops::spatial_attention(s, tq, tk, tv, to);
  s.submit_and_wait();
  const auto want = ref::spatial_attention(q, k, v, n, hw, c, 1.0 / std::sqrt(static_cast<double>(c)));
  return {
      normalised_error(download_floats(ctx, to), want), tolerance,
      "[" + std::to_string(n) + ", " + std::to_string(h) + "x" + std::to_string(w) + ", " + std::to_string(c) + "]"};
}

CheckResult with_kernel(Context& c, int64_t n, int64_t h, int64_t w, int64_t ch, uint32_t queries, uint32_t keys,
                        bool subgroup) {
  ops::SpatialAttentionKernel k;
  k.queries = queries;
  k.keys = keys;
  k.subgroup_kv = subgroup;
  return check_attn(c, n, h, w, ch, 4.0f, &k);
}

VKSPEC_OP_CHECK("spatial_attention", "1x1 C32", [](Context& c) { return check_attn(c, 1, 1, 1, 32, 4.0f); });
VKSPEC_OP_CHECK("spatial_attention", "7x5 C64 n2", [](Context& c) { return check_attn(c, 2, 7, 5, 64, 4.0f); });
VKSPEC_OP_CHECK("spatial_attention", "16x16 C512", [](Context& c) { return check_attn(c, 1, 16, 16, 512, 2.0f); });
// Peaky rows: logits up to ~40, so f32 rounding of the scores is amplified by exp.
// Peaky rows: logits up to ~40, so f32 rounding of the scores is amplified by exp.
VKSPEC_OP_CHECK("spatial_attention", "32x32 C64 peaky",
                [](Context& c) { return check_attn(c, 1, 32, 32, 64, 20.0f, nullptr, 5e-6); });
VKSPEC_OP_CHECK("spatial_attention", "33x33 C96", [](Context& c) { return check_attn(c, 1, 33, 33, 96, 4.0f); });
// Odd C: no 64-bit channel pairs, so the per-invocation kernel runs even on CPU drivers.
VKSPEC_OP_CHECK("spatial_attention", "6x7 C33 n2", [](Context& c) { return check_attn(c, 2, 6, 7, 33, 4.0f); });
VKSPEC_OP_CHECK("spatial_attention", "9x9 C128 own loads q1 k7",
                [](Context& c) { return with_kernel(c, 1, 9, 9, 128, 1, 7, false); });
VKSPEC_OP_CHECK("spatial_attention", "5x13 C64 n2 shared q3 k32",
                [](Context& c) { return with_kernel(c, 2, 5, 13, 64, 3, 32, true); });
VKSPEC_OP_CHECK("spatial_attention", "16x16 C32 own loads q4 k16",
                [](Context& c) { return with_kernel(c, 1, 16, 16, 32, 4, 16, false); });
// The GPU kernel (a workgroup per query), forced: any hw (scores in steps of 64), odd C, batches,
// the peaky rows of trained attention.
CheckResult per_query(Context& c, int64_t n, int64_t h, int64_t w, int64_t ch, float spread, double tolerance = 2e-6) {
  ops::SpatialAttentionKernel k;
  k.per_query = true;
  if (!ops::spatial_attention_per_query(c, n, h * w, k))
    return CheckResult::skip("per-query kernel not available here for " + std::to_string(h) + "x" + std::to_string(w));
  return check_attn(c, n, h, w, ch, spread, &k, tolerance);
}
VKSPEC_OP_CHECK("spatial_attention", "1x1 C32 per query", [](Context& c) { return per_query(c, 1, 1, 1, 32, 4.0f); });
VKSPEC_OP_CHECK("spatial_attention", "7x5 C33 n2 per query",
                [](Context& c) { return per_query(c, 2, 7, 5, 33, 4.0f); });
VKSPEC_OP_CHECK("spatial_attention", "16x16 C512 per query",
                [](Context& c) { return per_query(c, 1, 16, 16, 512, 2.0f); });
VKSPEC_OP_CHECK("spatial_attention", "32x32 C64 peaky per query",
                [](Context& c) { return per_query(c, 1, 32, 32, 64, 20.0f, 5e-6); });

}  // namespace
}  // namespace vkspec
