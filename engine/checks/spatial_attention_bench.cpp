// spatial_attention at the VQ AttnBlock shapes: our tokenizer (C 64 at 16x16 / 32x32) and
// LlamaGen VQ-16's lowest level (C 512 at 16x16), next to the double-precision CPU reference.
#include <cmath>
#include <string>

#include "engine/checks/op_bench.h"
#include "engine/ops/spatial_attention.h"
#include "engine/ref/spatial_attention_ref.h"

namespace vkspec {
namespace {

BenchResult bench_attn(Context& ctx, int repeat, int64_t h, int64_t c) {
  const Shape shape{1, h, h, c};
  const size_t count = static_cast<size_t>(shape.numel());
  const auto q = random_floats(count, 1), k = random_floats(count, 2), v = random_floats(count, 3);
  Tensor tq = upload_floats(ctx, q, DType::F32, shape, "q"), tk = upload_floats(ctx, k, DType::F32, shape, "k");
  Tensor tv = upload_floats(ctx, v, DType::F32, shape, "v"), to = ctx.tensor(DType::F32, shape, "out");
  const auto kern = ops::spatial_attention_default_kernel(ctx);
  BenchResult r;
  r.kernel = ops::spatial_attention_per_query(ctx, 1, h * h, kern)
                 ? "per query"
                 : std::to_string(kern.queries) + "x" + std::to_string(kern.keys) + (kern.subgroup_kv ? " sg" : "");
  r.flops = 4.0 * static_cast<double>(h * h) * static_cast<double>(h * h) * static_cast<double>(c);
  r.bytes = 4.0 * static_cast<double>(tq.bytes());
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { ops::spatial_attention(s, tq, tk, tv, to, 0.0f, kern); },
      &r.gpu_process_cpu_ms);
  r.cpu = "reference (double)";
  r.cpu_ms = median_cpu_ms(std::min(repeat, 3),
                           [&] { ref::spatial_attention(q, k, v, 1, h * h, c, 1.0 / std::sqrt(double(c))); });
  return r;
}

VKSPEC_OP_BENCH("spatial_attention", "16x16 C64", [](Context& c, int r) { return bench_attn(c, r, 16, 64); });
VKSPEC_OP_BENCH("spatial_attention", "32x32 C64", [](Context& c, int r) { return bench_attn(c, r, 32, 64); });
VKSPEC_OP_BENCH("spatial_attention", "16x16 C512", [](Context& c, int r) { return bench_attn(c, r, 16, 512); });

}  // namespace
}  // namespace vkspec
