#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// y = act(x + bias[i % channels]) over rows of `channels` f32 values; act is identity or ReLU.
// (Linear layers: matmul has no bias; the classifier's ReLUs.)
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Bias { float bias[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n;
  uint channels;  // 0: no bias
  uint relu;
} p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.n) return;
  float v = x[i];
  if (p.channels != 0u) v += bias[i % p.channels];
  y[i] = p.relu != 0u ? max(v, 0.0) : v;
}
