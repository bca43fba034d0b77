#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y = a + b, f32, elementwise (residual connections).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) readonly buffer B { float b[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
  const uint i = linear_invocation();
  if (i < p.n) y[i] = a[i] + b[i];
}
