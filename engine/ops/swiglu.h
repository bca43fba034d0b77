#pragma once
// The gated FFN's gate, elementwise in f32: LlamaGen's SwiGLU y = silu(w1 x) * (w3 x), and T5
// v1.1's gated-gelu y = gelu_tanh(wi_0 x) * (wi_1 x).
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// a, b, y: f32 [rows, hidden] (y may alias a or b).
void swiglu(CommandStream& s, const TensorView& a, const TensorView& b, const TensorView& y);

// ab: f32 [rows, 2 * hidden] holding a in columns [0, hidden) and b in [hidden, 2 * hidden) (a
// fused w1|w3 projection); y: f32 [rows, hidden]. y must not alias ab.
void swiglu_fused(CommandStream& s, const TensorView& ab, const TensorView& y);
// The same with the GELU-tanh gate (ops::gelu_tanh's function): gelu_tanh(a) * b.
void geglu_fused(CommandStream& s, const TensorView& ab, const TensorView& y);

}  // namespace vkspec::ops
