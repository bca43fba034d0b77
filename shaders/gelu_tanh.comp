#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y = GELU(x) with the tanh approximation (torch's approximate='tanh'), f32, elementwise. y may be x.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.n) return;
  const float v = x[i];
  const float u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
  // tanh(u) = 1 - 2 / (exp(2u) + 1): GLSL's tanh may return NaN for large |u| on some drivers;
  // this form saturates to +-1 (exp overflows to inf, 2 / inf = 0).
  const float t = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
  y[i] = 0.5 * v * (1.0 + t);
}
