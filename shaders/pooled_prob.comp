#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Probability mass of a token's k nearest codebook neighbours, one invocation per position
// (engine/ops/speculative.h): out[j] = sum_m p[j][nb[x][m]], m < k, in m order.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer Tok { uint tokens[]; };
layout(binding = 2) readonly buffer Nb { uint neighbours[]; };
layout(binding = 3) writeonly buffer Out { float outv[]; };
layout(push_constant) uniform P { uint rows, vocab, p_off, tok_off, out_off, k, k_max; } p;

void main() {
  const uint j = linear_invocation();
  if (j >= p.rows) return;
  const uint x = tokens[p.tok_off + j];
  precise float s = 0.0;
  if (x < p.vocab) {
    for (uint m = 0u; m < p.k; ++m) {
      const uint y = neighbours[x * p.k_max + m];
      if (y < p.vocab) s = s + pv[p.p_off + j * p.vocab + y];
    }
  }
  outv[p.out_off + j] = s;
}
