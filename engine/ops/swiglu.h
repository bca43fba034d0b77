#pragma once
// The SwiGLU gate of LlamaGen's FeedForward: y = silu(w1 x) * (w3 x), elementwise in f32.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// a, b, y: f32 [rows, hidden] (y may alias a or b).
void swiglu(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y);

// ab: f32 [rows, 2 * hidden] holding a in columns [0, hidden) and b in [hidden, 2 * hidden) (a
// fused w1|w3 projection); y: f32 [rows, hidden]. y must not alias ab.
void swiglu_fused(CommandStream& s, const TensorView& ab, const TensorView& y);

}  // namespace vkspec::ops
