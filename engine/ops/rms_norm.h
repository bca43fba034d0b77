#pragma once
// RMSNorm as in LlamaGen: y = x * rsqrt(mean(x^2) + eps) * weight, per row, computed in f32.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// x, y: f32 [rows, dim] (any shape whose last dim is dim); weight: f32 or f16 [dim]. y may alias x.
// LlamaGen uses eps = 1e-5. Needs subgroup arithmetic in compute shaders.
void rms_norm(CommandStream& s, const TensorView& x, const TensorView& weight, const TensorView& y, float eps = 1e-5f);

// (A residual add and the norm after it ride in the projections around them: ops::MatmulFusion.)

}  // namespace vkspec::ops
