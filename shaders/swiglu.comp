#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "gelu.glsl"
#include "silu.glsl"
// y[r, j] = gate(a[r, j]) * b[r, j] for the FFN, where a and b are column ranges of row-strided
// matrices (both may be halves of one fused [rows, 2 * hidden] buffer bound twice); the gate is
// silu (LLaMA's SwiGLU) or, with GELU_GATE, GELU-tanh (T5 v1.1's gated-gelu).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint GELU_GATE = 0;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) readonly buffer B { float b[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint rows, hidden;
  uint a_stride, a_offset;
  uint b_stride, b_offset;
} p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.rows * p.hidden) return;
  const uint r = i / p.hidden, j = i - r * p.hidden;
  const float av = a[r * p.a_stride + p.a_offset + j];
  const float bv = b[r * p.b_stride + p.b_offset + j];
  y[i] = GELU_GATE != 0 ? gelu_tanh(av) * bv : silu_times(av, bv);
}
