// group_norm + swish at VQ decoder shapes, next to the double-precision CPU reference.
#include <string>

#include "engine/checks/op_bench.h"
#include "engine/ops/group_norm.h"
#include "engine/ref/group_norm_ref.h"

namespace vkspec {
namespace {

BenchResult bench_gn(Context& ctx, int repeat, int64_t h, int64_t c) {
  const Shape shape{1, h, h, c};
  const auto x = random_floats(static_cast<size_t>(shape.numel()), 1);
  const auto g = random_floats(static_cast<size_t>(c), 2), b = random_floats(static_cast<size_t>(c), 3);
  Tensor tx = upload_floats(ctx, x, DType::F32, shape, "x"), ty = ctx.tensor(DType::F32, shape, "y");
  Tensor tg = upload_floats(ctx, g, DType::F32, {c}, "gamma"), tb = upload_floats(ctx, b, DType::F32, {c}, "beta");
  ops::GroupNormParams p;
  p.swish = true;
  BenchResult r;
  r.kernel = "fused";
  r.bytes = 2.0 * static_cast<double>(tx.bytes());
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { ops::group_norm(s, tx, tg, tb, ty, p); }, &r.gpu_process_cpu_ms);
  r.cpu = "reference (double)";
  r.cpu_ms = median_cpu_ms(repeat, [&] { ref::group_norm(x, g, b, {1, h * h, c, 32, 1e-6, true}); });
  return r;
}

VKSPEC_OP_BENCH("group_norm", "swish 32x32 C64", [](Context& c, int r) { return bench_gn(c, r, 32, 64); });
VKSPEC_OP_BENCH("group_norm", "swish 256x256 C128", [](Context& c, int r) { return bench_gn(c, r, 256, 128); });

}  // namespace
}  // namespace vkspec
