#pragma once
// Elementwise ops on f32 tensors.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// y = a + b (all f32, same element count). y may alias a or b.
void add(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y);

enum class Activation : uint32_t { None = 0, Relu = 1, Silu = 2, Gelu = 3 };

// y = residual + act(x + bias): bias f32 [C] broadcast over rows of C = the last dimension of x;
// act None, ReLU, SiLU (v / (1 + exp(-v)), the arithmetic of ops::swish) or GELU with erf (torch's
// nn.GELU(); erf approximated to 1.5e-7 absolute, shaders/bias_act.comp); residual f32 with x's
// element count. bias and residual may be empty views (none). y may alias x or residual.
// A linear layer's bias, its activation and the residual add after it in one dispatch (the draft
// heads' blocks), with the bits the separate ops give.
void bias_act(CommandStream& s, const TensorView& x, const TensorView& bias, const TensorView& y, Activation act,
              const TensorView& residual = {});

// 2x2 max pooling with stride 2 (odd sizes floor), channel-last f32: x [N, H, W, C] ->
// y [N, H / 2, W / 2, C].
void max_pool_2x2(CommandStream& s, const TensorView& x, const TensorView& y);
// The same with the average (((a + b) + c) + d) * 0.25 (torch's avg_pool2d(2); MuLo-SD's pixel
// downsampling, as tools/encode_dataset.py makes the low-resolution training images).
void avg_pool_2x2(CommandStream& s, const TensorView& x, const TensorView& y);

}  // namespace vkspec::ops
