// conv2d at VQ decoder shapes (ch 64 at 32x32 is our tokenizer's top level; 128 at 64x64 is
// LlamaGen VQ-16's), next to the double-precision CPU reference.
#include <string>

#include "engine/checks/op_bench.h"
#include "engine/ops/conv2d.h"
#include "engine/ref/conv2d_ref.h"

namespace vkspec {
namespace {

// kernel: the device's default where null.
BenchResult bench_conv(Context& ctx, int repeat, ref::Conv2dShape c, DType wt,
                       const ops::Conv2dKernel* kernel = nullptr) {
  const auto x = random_floats(static_cast<size_t>(c.n * c.h * c.w * c.ci), 1);
  const auto w = random_floats(static_cast<size_t>(c.co * c.ci * c.kh * c.kw), 2, -0.1f, 0.1f);
  const auto b = random_floats(static_cast<size_t>(c.co), 3);
  Tensor tx = upload_floats(ctx, x, DType::F32, {c.n, c.h, c.w, c.ci}, "x");
  Tensor tw = upload_floats(ctx, w, wt, {c.co, c.ci, c.kh, c.kw}, "weight");
  Tensor tb = upload_floats(ctx, b, DType::F32, {c.co}, "bias");
  Tensor ty = ctx.tensor(DType::F32, {c.n, c.out_h(), c.out_w(), c.co}, "y");
  const ops::Conv2dParams p{static_cast<uint32_t>(c.stride), static_cast<uint32_t>(c.pad_top),
                            static_cast<uint32_t>(c.pad_left), static_cast<uint32_t>(c.pad_bottom),
                            static_cast<uint32_t>(c.pad_right)};
  const ops::Conv2dKernel k = kernel ? *kernel : ops::conv2d_default_kernel(ctx, tw.shape(), ty.shape());
  BenchResult r;
  r.kernel = std::to_string(k.co_block) + "x" + std::to_string(k.px_block) + (k.subgroup_weights ? " sg" : "");
  r.flops = 2.0 * static_cast<double>(ty.numel()) * static_cast<double>(c.ci * c.kh * c.kw);
  r.bytes = static_cast<double>(tx.bytes() + tw.bytes() + tb.bytes() + ty.bytes());
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { ops::conv2d(s, tx, tw, tb, ty, p, nullptr, k); }, &r.gpu_process_cpu_ms);
  r.cpu = "reference (double)";
  r.cpu_ms = median_cpu_ms(std::min(repeat, 3), [&] { ref::conv2d(c, x, w, b); });
  return r;
}

VKSPEC_OP_BENCH("conv2d", "3x3 64->64 32x32", [](Context& c, int r) {
  return bench_conv(c, r, {1, 32, 32, 64, 64, 3, 3, 1, 1, 1, 1, 1}, DType::F32);
});
VKSPEC_OP_BENCH("conv2d", "3x3 64->64 32x32 f16", [](Context& c, int r) {
  return bench_conv(c, r, {1, 32, 32, 64, 64, 3, 3, 1, 1, 1, 1, 1}, DType::F16);
});
VKSPEC_OP_BENCH("conv2d", "down 64 32x32", [](Context& c, int r) {
  return bench_conv(c, r, {1, 32, 32, 64, 64, 3, 3, 2, 0, 0, 1, 1}, DType::F32);
});
VKSPEC_OP_BENCH("conv2d", "1x1 64->64 32x32", [](Context& c, int r) {
  return bench_conv(c, r, {1, 32, 32, 64, 64, 1, 1, 1, 0, 0, 0, 0}, DType::F32);
});
VKSPEC_OP_BENCH("conv2d", "3x3 128->128 64x64 f16", [](Context& c, int r) {
  return bench_conv(c, r, {1, 64, 64, 128, 128, 3, 3, 1, 1, 1, 1, 1}, DType::F16);
});

// conv2d-sweep (run only when named): output channels x pixels per invocation on a small layer
// (our tokenizer's, which MuLo's pixel upsampler runs every step) and LlamaGen VQ-16's, the grid
// a device's default blocking (conv2d_default_kernel) is chosen from.
struct RegisterSweep {
  RegisterSweep() {
    const std::pair<const char*, ref::Conv2dShape> shapes[] = {
        {"3x3 64->64 32x32 f16", {1, 32, 32, 64, 64, 3, 3, 1, 1, 1, 1, 1}},
        {"3x3 128->128 64x64 f16", {1, 64, 64, 128, 128, 3, 3, 1, 1, 1, 1, 1}}};
    for (const auto& [name, shape] : shapes)
      for (uint32_t co : {1u, 2u, 4u, 8u, 16u})
        for (uint32_t px : {1u, 2u, 4u, 8u}) {
          ops::Conv2dKernel k;
          k.co_block = co;
          k.px_block = px;
          RegisterOpBench("conv2d-sweep", std::string(name) + " co" + std::to_string(co) + " px" + std::to_string(px),
                          [shape = shape, k](Context& c, int r) { return bench_conv(c, r, shape, DType::F16, &k); });
        }
  }
} register_conv2d_sweep;

}  // namespace
}  // namespace vkspec
