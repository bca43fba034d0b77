#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// 2x2 pooling, stride 2 (floor), channel-last: x [N, H, W, C] -> y [N, H/2, W/2, C]; max or
// average (((a + b) + c) + d) * 0.25.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n_out;  // N * (H/2) * (W/2) * C
  uint h, w, c, average;
} p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.n_out) return;
  const uint ho = p.h / 2u, wo = p.w / 2u;
  const uint ch = i % p.c;
  uint rest = i / p.c;
  const uint ox = rest % wo;
  rest /= wo;
  const uint oy = rest % ho;
  const uint img = rest / ho;
  const uint base = ((img * p.h + 2u * oy) * p.w + 2u * ox) * p.c + ch;
  const uint row = p.w * p.c;
  const float a = x[base], b = x[base + p.c], c = x[base + row], d = x[base + row + p.c];
  if (p.average != 0u) {
    precise float s = a + b;
    s = s + c;
    s = s + d;
    y[i] = s * 0.25;
  } else {
    y[i] = max(max(a, b), max(c, d));
  }
}
