#include "engine/ops/conv2d.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

std::string shapes(const Shape& x, const Shape& w, const Conv2dParams& p) {
  return "x " + x.str() + ", weight " + w.str() + ", stride " + std::to_string(p.stride) + ", pad (t" +
         std::to_string(p.pad_top) + " l" + std::to_string(p.pad_left) + " b" + std::to_string(p.pad_bottom) + " r" +
         std::to_string(p.pad_right) + ")";
}

}  // namespace

Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p) {
  require(x.rank == 4 && w.rank == 4, "conv2d",
          [&] { return "x must be [N, H, W, Ci] and weight [Co, Ci, kh, kw]: " + shapes(x, w, p); });
  require(x[3] == w[1], "conv2d", [&] { return "input channels differ: " + shapes(x, w, p); });
  require((w[2] == 1 || w[2] == 3) && (w[3] == 1 || w[3] == 3), "conv2d",
          [&] { return "kernel must be 1 or 3 per side: " + shapes(x, w, p); });
  require(p.stride == 1 || p.stride == 2, "conv2d", [&] { return "stride must be 1 or 2: " + shapes(x, w, p); });
  require(p.pad_top < w[2] && p.pad_bottom < w[2] && p.pad_left < w[3] && p.pad_right < w[3], "conv2d",
          [&] { return "padding must be below the kernel size: " + shapes(x, w, p); });
  const int64_t hp = x[1] + p.pad_top + p.pad_bottom, wp = x[2] + p.pad_left + p.pad_right;
  require(x[0] >= 1 && x[1] >= 1 && x[2] >= 1 && x[3] >= 1 && w[0] >= 1, "conv2d",
          [&] { return "empty tensor: " + shapes(x, w, p); });
  require(hp >= w[2] && wp >= w[3], "conv2d", [&] { return "input smaller than the kernel: " + shapes(x, w, p); });
  return {x[0], (hp - w[2]) / p.stride + 1, (wp - w[3]) / p.stride + 1, w[0]};
}

Conv2dKernel conv2d_default_kernel(const Context& ctx, const Shape& weight, const Shape& out) {
  Conv2dKernel k;
  // 16 x 8 outputs per invocation: on lavapipe 16 x 16 runs ~25% faster but its 256 live
  // accumulators make LLVM take seconds per pipeline. Narrow layers (conv_out to 1 or 3 image
  // channels, quant_conv to 8) take the smallest channel block that covers them.
  const int64_t co = weight.rank == 4 ? weight[0] : 1;
  k.co_block = 1;
  while (k.co_block < 16 && k.co_block < co) k.co_block *= 2;
  k.px_block = 8;
  const bool cpu = ctx.caps().cpu_driver;
  k.subgroup_weights = cpu && ctx.caps().subgroup_lane_reads;
  k.x_pairs = cpu;
  // GPUs: each invocation walks every input channel serially, so a small layer in 16 x 8 blocks
  // is a few hundred long-running invocations on a machine that wants tens of thousands (an H100
  // took 0.37 ms for 3x3 64->64 at 32x32, 512 invocations: MuLo's pixel upsampler spent 62 % of
  // its GPU time in conv2d). Halve the pixel and channel blocks in turn until there are enough.
  if (!cpu && out.rank == 4) {
    constexpr int64_t kMinInvocations = 8192;
    const auto invocations = [&] {
      return out[0] * out[1] * ((out[2] + k.px_block - 1) / k.px_block) * ((out[3] + k.co_block - 1) / k.co_block);
    };
    bool px_turn = true;
    while (invocations() < kMinInvocations && (k.px_block > 1 || k.co_block > 1)) {
      if ((px_turn && k.px_block > 1) || k.co_block == 1)
        k.px_block /= 2;
      else
        k.co_block /= 2;
      px_turn = !px_turn;
    }
  }
  return k;
}

void conv2d(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& bias,
            const TensorView& y, const Conv2dParams& params, const TensorView* residual) {
  conv2d(s, x, weight, bias, y, params, residual,
         conv2d_default_kernel(s.context(), weight.shape, conv2d_output_shape(x.shape, weight.shape, params)));
}

void conv2d(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& bias,
            const TensorView& y, const Conv2dParams& params, const TensorView* residual, const Conv2dKernel& kernel) {
  const Shape out = conv2d_output_shape(x.shape, weight.shape, params);
  const auto what = [&] { return shapes(x.shape, weight.shape, params); };
  require(x.dtype == DType::F32 && bias.dtype == DType::F32 && y.dtype == DType::F32, "conv2d",
          [&] { return "x, bias and y must be f32: " + what(); });
  require(weight.dtype == DType::F32 || weight.dtype == DType::F16, "conv2d",
          [&] { return "weight must be f16 or f32: " + what(); });
  require(bias.shape.rank == 1 && bias.shape[0] == weight.shape[0], "conv2d",
          [&] { return "bias " + bias.shape.str() + " does not match " + what(); });
  require(y.shape == out, "conv2d",
          [&] { return "y is " + y.shape.str() + ", expected " + out.str() + " for " + what(); });
  require(!overlap(x, y), "conv2d", [&] { return "y overlaps x: " + what(); });
  if (residual) {
    require(residual->dtype == DType::F32 && residual->shape == out, "conv2d",
            [&] { return "residual " + residual->shape.str() + " must be f32 " + out.str() + " for " + what(); });
    require(!overlap(*residual, x), "conv2d", [&] { return "residual overlaps x: " + what(); });
    require(!overlap(*residual, y) || (residual->buffer == y.buffer && residual->offset == y.offset), "conv2d",
            [&] { return "residual partially overlaps y: " + what(); });
  }

  Context& ctx = s.context();
  const uint32_t sg = std::max<uint32_t>(ctx.caps().subgroup_size, 1);
  // Whole subgroups: the broadcasts need every lane present. CPU drivers run a workgroup on one
  // thread, so there one subgroup per workgroup: a 16x16 output makes only 32 blocks per channel
  // block, half of a 64-wide workgroup.
  const uint32_t wg = ctx.caps().cpu_driver ? sg : std::max<uint32_t>(64, sg);
  const bool f16 = weight.dtype == DType::F16;
  const uint32_t co_block = kernel.co_block, px_block = kernel.px_block;
  require(co_block == 1 || co_block == 2 || co_block == 4 || co_block == 8 || co_block == 16 || co_block == 32,
          "conv2d", "co_block must be a power of two up to 32");
  require(px_block >= 1 && px_block <= 16, "conv2d", "px_block must be 1 to 16");
  const bool shared = kernel.subgroup_weights && ctx.caps().subgroup_lane_reads;
  const uint32_t kh = static_cast<uint32_t>(weight.shape[2]), kw = static_cast<uint32_t>(weight.shape[3]);
  const bool pairs = shared && kernel.x_pairs && ctx.caps().shader_int64 && x.shape[3] % 2 == 0 && x.offset % 8 == 0;
  const ShaderId shader = pairs ? shaders::conv2d_shared_x64 : shared ? shaders::conv2d_shared : shaders::conv2d;
  const Pipeline& p = ctx.pipeline(shader, {wg, kh, kw, params.stride, co_block, px_block, sg});
  struct {
    uint32_t H, W, Ci, Ho, Wo, Co;
    int32_t pad_top, pad_left;
    uint32_t row_blocks, total_blocks, weight_f16, residual;
  } push{};
  push.H = static_cast<uint32_t>(x.shape[1]);
  push.W = static_cast<uint32_t>(x.shape[2]);
  push.Ci = static_cast<uint32_t>(x.shape[3]);
  push.Ho = static_cast<uint32_t>(out[1]);
  push.Wo = static_cast<uint32_t>(out[2]);
  push.Co = static_cast<uint32_t>(out[3]);
  push.pad_top = static_cast<int32_t>(params.pad_top);
  push.pad_left = static_cast<int32_t>(params.pad_left);
  push.row_blocks = ceil_div(push.Wo, px_block);
  const uint64_t total = static_cast<uint64_t>(out[0]) * push.Ho * push.row_blocks;
  require(total < (1ull << 32) && static_cast<uint64_t>(out.numel()) < (1ull << 32) &&
              static_cast<uint64_t>(x.numel()) < (1ull << 32),
          "conv2d", [&] { return "tensors too large for 32-bit indexing: " + what(); });
  push.total_blocks = static_cast<uint32_t>(total);
  push.weight_f16 = f16 ? 1 : 0;
  push.residual = residual ? 1 : 0;
  const Grid g = grid_1d(ctx, total, wg);
  const uint32_t co_groups = ceil_div(push.Co, co_block);
  require(co_groups <= ctx.caps().max_workgroup_count[1] && g.y <= ctx.caps().max_workgroup_count[2], "conv2d",
          [&] { return "grid exceeds the device's workgroup count limits: " + what(); });
  // Without a residual, x stands in for the unused binding (push.residual = 0: never read).
  s.dispatch(p, {x, weight, bias, residual ? *residual : x, y}, push, g.x, co_groups, g.y);
}

}  // namespace vkspec::ops
