#pragma once
// RMSNorm as in LlamaGen: y = x * rsqrt(mean(x^2) + eps) * weight, per row, computed in f32.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// x, y: f32 [rows, dim] (any shape whose last dim is dim); weight: f32 or f16 [dim]. y may alias x.
// LlamaGen uses eps = 1e-5. Needs subgroup arithmetic in compute shaders.
void rms_norm(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& y, float eps = 1e-5f);

// A residual connection and the norm after it, fused: x = x + delta, then y = rms_norm(x) * weight
// (the same values as add then rms_norm, in one dispatch instead of two). x, delta, y: f32 of the
// same size, last dim = weight's; y may alias delta but not x.
void add_rms_norm(CommandStream& s, const TensorView& x, const TensorView& delta, const TensorView& weight,
                  const TensorView& y, float eps = 1e-5f);

}  // namespace vkspec::ops
