#include <cmath>

#include "engine/checks/op_check.h"
#include "engine/ops/conv2d.h"
#include "engine/ref/conv2d_ref.h"

namespace vkspec {
namespace {

enum class Residual { None, Separate, InPlace };

// kernel: nullptr = conv2d's own choice for the device.
CheckResult check_conv(Context& ctx, ref::Conv2dShape c, DType wdtype, Residual residual,
                       const ops::Conv2dKernel* kernel = nullptr) {
  const int64_t ho = c.out_h(), wo = c.out_w();
  const auto x = random_floats(static_cast<size_t>(c.n * c.h * c.w * c.ci), 11);
  const float wscale = 1.0f / std::sqrt(static_cast<float>(c.ci * c.kh * c.kw));
  auto w = random_floats(static_cast<size_t>(c.co * c.ci * c.kh * c.kw), 12, -wscale, wscale);
  if (wdtype == DType::F16) w = round_to_half(w);
  const auto b = random_floats(static_cast<size_t>(c.co), 13, -0.5f, 0.5f);
  const Shape ys{c.n, ho, wo, c.co};
  const auto r = residual == Residual::None ? std::vector<float>{} : random_floats(static_cast<size_t>(ys.numel()), 14);

  Tensor tx = upload_floats(ctx, x, DType::F32, {c.n, c.h, c.w, c.ci}, "x");
  Tensor tw = upload_floats(ctx, w, wdtype, {c.co, c.ci, c.kh, c.kw}, "weight");
  Tensor tb = upload_floats(ctx, b, DType::F32, {c.co}, "bias");
  Tensor ty =
      residual == Residual::InPlace ? upload_floats(ctx, r, DType::F32, ys, "y") : ctx.tensor(DType::F32, ys, "y");
  Tensor tr = residual == Residual::Separate ? upload_floats(ctx, r, DType::F32, ys, "residual") : Tensor();
  const ops::Conv2dParams p{static_cast<uint32_t>(c.stride), static_cast<uint32_t>(c.pad_top),
                            static_cast<uint32_t>(c.pad_left), static_cast<uint32_t>(c.pad_bottom),
                            static_cast<uint32_t>(c.pad_right)};
  const TensorView rv = residual == Residual::Separate ? tr.view() : ty.view();
  CommandStream s(ctx);
  const TensorView* rp = residual == Residual::None ? nullptr : &rv;
  if (kernel)
    ops::conv2d(s, tx, tw, tb, ty, p, rp, *kernel);
  else
    ops::conv2d(s, tx, tw, tb, ty, p, rp);
  s.submit_and_wait();
  const auto want = ref::conv2d(c, x, w, b, r);
  return {normalised_error(download_floats(ctx, ty), want), 2e-6,
          "x [" + std::to_string(c.n) + "," + std::to_string(c.h) + "," + std::to_string(c.w) + "," +
              std::to_string(c.ci) + "] -> [" + std::to_string(ho) + "," + std::to_string(wo) + "," +
              std::to_string(c.co) + "]"};
}

ref::Conv2dShape same3(int64_t n, int64_t h, int64_t w, int64_t ci, int64_t co) {
  return {n, h, w, ci, co, 3, 3, 1, 1, 1, 1, 1};
}
ref::Conv2dShape down3(int64_t n, int64_t h, int64_t w, int64_t ci) { return {n, h, w, ci, ci, 3, 3, 2, 0, 0, 1, 1}; }
ref::Conv2dShape one(int64_t n, int64_t h, int64_t w, int64_t ci, int64_t co) {
  return {n, h, w, ci, co, 1, 1, 1, 0, 0, 0, 0};
}

// 3x3 stride 1 pad 1: conv_in from 1 or 3 image channels, ResnetBlock convs, conv_out to pixels.
VKSPEC_OP_CHECK("conv2d", "3x3 1->32 28x28",
                [](Context& c) { return check_conv(c, same3(1, 28, 28, 1, 32), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 3->64 33x33 n2 f16",
                [](Context& c) { return check_conv(c, same3(2, 33, 33, 3, 64), DType::F16, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 64->64 32x32",
                [](Context& c) { return check_conv(c, same3(1, 32, 32, 64, 64), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 64->64 32x32 f16 +res",
                [](Context& c) { return check_conv(c, same3(1, 32, 32, 64, 64), DType::F16, Residual::Separate); });
VKSPEC_OP_CHECK("conv2d", "3x3 96->128 13x17 f16 +res inplace",
                [](Context& c) { return check_conv(c, same3(1, 13, 17, 96, 128), DType::F16, Residual::InPlace); });
VKSPEC_OP_CHECK("conv2d", "3x3 128->96 1x1",
                [](Context& c) { return check_conv(c, same3(1, 1, 1, 128, 96), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 32->32 2x3 n3 +res",
                [](Context& c) { return check_conv(c, same3(3, 2, 3, 32, 32), DType::F32, Residual::Separate); });
VKSPEC_OP_CHECK("conv2d", "3x3 32->1 29x31",
                [](Context& c) { return check_conv(c, same3(1, 29, 31, 32, 1), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 128->3 16x16 f16",
                [](Context& c) { return check_conv(c, same3(1, 16, 16, 128, 3), DType::F16, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "3x3 64->100 7x9 n2",
                [](Context& c) { return check_conv(c, same3(2, 7, 9, 64, 100), DType::F32, Residual::None); });
// Downsample: pad right/bottom by one, 3x3 stride 2, no other padding.
VKSPEC_OP_CHECK("conv2d", "down 64 32x32",
                [](Context& c) { return check_conv(c, down3(1, 32, 32, 64), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "down 96 33x33 f16",
                [](Context& c) { return check_conv(c, down3(1, 33, 33, 96), DType::F16, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "down 32 5x8 n2",
                [](Context& c) { return check_conv(c, down3(2, 5, 8, 32), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "down 128 2x2",
                [](Context& c) { return check_conv(c, down3(1, 2, 2, 128), DType::F32, Residual::None); });
// 1x1: quant_conv, post_quant_conv, nin_shortcut (+ residual), attention q/k/v/proj_out.
VKSPEC_OP_CHECK("conv2d", "1x1 64->8 16x16",
                [](Context& c) { return check_conv(c, one(1, 16, 16, 64, 8), DType::F32, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "1x1 8->64 16x16 f16",
                [](Context& c) { return check_conv(c, one(1, 16, 16, 8, 64), DType::F16, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "1x1 64->128 15x15 +res",
                [](Context& c) { return check_conv(c, one(1, 15, 15, 64, 128), DType::F32, Residual::Separate); });
VKSPEC_OP_CHECK("conv2d", "1x1 96->96 9x11 n2 f16",
                [](Context& c) { return check_conv(c, one(2, 9, 11, 96, 96), DType::F16, Residual::None); });
VKSPEC_OP_CHECK("conv2d", "1x1 512->512 16x16 f16 +res inplace",
                [](Context& c) { return check_conv(c, one(1, 16, 16, 512, 512), DType::F16, Residual::InPlace); });
VKSPEC_OP_CHECK("conv2d", "1x1 32->32 1x1",
                [](Context& c) { return check_conv(c, one(1, 1, 1, 32, 32), DType::F32, Residual::None); });

// Explicit kernels: per-invocation loads (the GPU default) and subgroup-shared loads (the CPU
// default), with blocks that do not divide the shapes.
CheckResult with_kernel(Context& c, ref::Conv2dShape shape, DType wdtype, Residual residual, uint32_t co_block,
                        uint32_t px_block, bool subgroup) {
  ops::Conv2dKernel k;
  k.co_block = co_block;
  k.px_block = px_block;
  k.subgroup_weights = subgroup;
  return check_conv(c, shape, wdtype, residual, &k);
}
VKSPEC_OP_CHECK("conv2d", "3x3 64->64 19x21 own loads co16 px8", [](Context& c) {
  return with_kernel(c, same3(1, 19, 21, 64, 64), DType::F32, Residual::Separate, 16, 8, false);
});
VKSPEC_OP_CHECK("conv2d", "3x3 32->48 9x9 f16 own loads co4 px3", [](Context& c) {
  return with_kernel(c, same3(2, 9, 9, 32, 48), DType::F16, Residual::None, 4, 3, false);
});
VKSPEC_OP_CHECK("conv2d", "3x3 64->96 11x7 shared co32 px5", [](Context& c) {
  return with_kernel(c, same3(1, 11, 7, 64, 96), DType::F32, Residual::InPlace, 32, 5, true);
});
VKSPEC_OP_CHECK("conv2d", "down 64 17x17 f16 shared co8 px16", [](Context& c) {
  return with_kernel(c, down3(1, 17, 17, 64), DType::F16, Residual::None, 8, 16, true);
});
VKSPEC_OP_CHECK("conv2d", "1x1 64->40 6x6 own loads co16 px1", [](Context& c) {
  return with_kernel(c, one(1, 6, 6, 64, 40), DType::F32, Residual::None, 16, 1, false);
});

}  // namespace
}  // namespace vkspec
