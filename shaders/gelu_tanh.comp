#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "gelu.glsl"
// y = GELU(x) with the tanh approximation (torch's approximate='tanh'), f32, elementwise. y may be x.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.n) return;
  y[i] = gelu_tanh(x[i]);
}
