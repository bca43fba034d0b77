#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Finishes split attention: out = sum_i acc_i * exp(m_i - M) / sum_i l_i * exp(m_i - M) over the
// splits i of one (batch, head, query), M = max m_i. Splits that saw no key have l = 0 and count
// for nothing; a query that saw no key at all gets zeros.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer W { float ws[]; };  // acc [B, H, T, splits, Dh], then (m, l)
layout(binding = 1) writeonly buffer O { float o[]; };  // [B, T, H, Dh]
layout(push_constant) uniform P {
  uint B, T, H, head_dim, splits;
} p;

void main() {
  const uint i = linear_invocation();
  if (i >= p.B * p.T * p.H * p.head_dim) return;
  const uint d = i % p.head_dim, bth = i / p.head_dim;
  const uint h = bth % p.H, bt = bth / p.H;
  const uint t = bt % p.T, b = bt / p.T;
  const uint row = ((b * p.H + h) * p.T + t) * p.splits;
  const uint ml = p.B * p.H * p.T * p.splits * p.head_dim;
  float mx = -3.0e38;
  for (uint s = 0; s < p.splits; ++s)
    if (ws[ml + (row + s) * 2u + 1u] > 0.0) mx = max(mx, ws[ml + (row + s) * 2u]);
  float num = 0.0, den = 0.0;
  for (uint s = 0; s < p.splits; ++s) {
    const float l = ws[ml + (row + s) * 2u + 1u];
    if (l > 0.0) {
      const float w = exp(ws[ml + (row + s) * 2u] - mx);
      den += l * w;
      num += ws[(row + s) * p.head_dim + d] * w;
    }
  }
  o[i] = den > 0.0 ? num / den : 0.0;
}
