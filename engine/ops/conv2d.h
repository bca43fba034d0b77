#pragma once
// 2D convolution for the VQ tokenizer (LlamaGen's Encoder/Decoder), channel-last.
//
// Layouts (row-major, last index fastest):
//   x         [N, H, W, Ci]      f32  activations, one image after another, channels innermost
//   weight    [Co, Ci, kh, kw]   f16 or f32, PyTorch's Conv2d layout as checkpoints store it
//   bias      [Co]               f32
//   residual  [N, Ho, Wo, Co]    f32  optional; y = conv(x) + residual (ResnetBlock's x + h)
//   y         [N, Ho, Wo, Co]    f32
// kh, kw are 1 or 3; stride 1 or 2; zero padding per side in [0, k-1];
// Ho = (H + pad_top + pad_bottom - kh) / stride + 1 (floor), likewise Wo.
// An [HW, C] matrix (attention q/k/v) is the same memory as [1, H, W, C].
#include <cstdint>

#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

struct Conv2dParams {
  uint32_t stride = 1;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  // Stride 1, k/2 on every side: output size = input size (3x3 convs, and 1x1 with k = 1).
  static Conv2dParams same(uint32_t k) { return {1, k / 2, k / 2, k / 2, k / 2}; }
  // LlamaGen's Downsample: F.pad(x, (0, 1, 0, 1)) then a 3x3 stride-2 conv without padding.
  static Conv2dParams downsample() { return {2, 0, 0, 1, 1}; }
};

// How the work is split: each invocation computes co_block output channels x px_block pixels of
// one output row. With subgroup_weights the lanes of a subgroup load the weights (the same for
// all of them) once between them and exchange them with shuffles to constant lanes: CPU drivers
// issue buffer loads lane by lane, so this cuts the loads several-fold there; GPUs cache uniform
// loads and would only pay for the shuffles. Ignored without DeviceCaps::subgroup_lane_reads.
struct Conv2dKernel {
  uint32_t co_block = 16;  // 1, 2, 4, 8, 16 or 32
  uint32_t px_block = 8;   // 1 to 16
  bool subgroup_weights = false;
  // With subgroup_weights: read x two channels per 64-bit load (Ci even, shaderInt64), which
  // halves the input loads on CPU drivers. Ignored where it does not apply.
  bool x_pairs = false;
};

// The kernel conv2d() uses for this weight shape and output shape [N, Ho, Wo, Co] on this device.
Conv2dKernel conv2d_default_kernel(const Context& ctx, const Shape& weight, const Shape& out);

// y must not overlap x. residual may be y itself (in-place accumulate) or a separate tensor.
void conv2d(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& bias,
            const TensorView& y, const Conv2dParams& params, const TensorView* residual = nullptr);
// Same with an explicit kernel (tests and tuning).
void conv2d(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& bias,
            const TensorView& y, const Conv2dParams& params, const TensorView* residual, const Conv2dKernel& kernel);

// Output shape for x [N, H, W, Ci] and weight [Co, Ci, kh, kw]; throws when they do not fit.
Shape conv2d_output_shape(const Shape& x, const Shape& weight, const Conv2dParams& params);

}  // namespace vkspec::ops
