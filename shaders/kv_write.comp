#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Stores the k and v head rows of new tokens (token n = b * T + t) into cache slot slots[t] of
// batch row b, converting to f16 for f16 caches. One invocation per element pair, so an f16
// cache is written in whole 32-bit words and never read back. Slots >= S are skipped.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CACHE_F16 = 0;
layout(binding = 0) readonly buffer Slots { uint slots[]; };
layout(binding = 1) readonly buffer KS { float ks[]; };
layout(binding = 2) readonly buffer VS { float vs[]; };
layout(binding = 3) writeonly buffer KC { uint kc[]; };
layout(binding = 4) writeonly buffer VC { uint vc[]; };
layout(push_constant) uniform P {
  uint tokens, T, H, head_dim, S;
  uint k_stride, k_offset, v_stride, v_offset;
  uint slot_batch_stride;  // 0: slots [T] shared by the batch rows; T: slots [B, T]
} p;

void main() {
  const uint i = linear_invocation();
  const uint pairs = p.head_dim >> 1;
  if (i >= p.tokens * p.H * pairs) return;
  const uint pair = i % pairs, nh = i / pairs;
  const uint h = nh % p.H, n = nh / p.H;
  const uint b = n / p.T, t = n - b * p.T;
  const uint slot = slots[b * p.slot_batch_stride + t];
  if (slot >= p.S) return;
  const uint col = h * p.head_dim + 2u * pair;
  const vec2 k = vec2(ks[p.k_offset + n * p.k_stride + col], ks[p.k_offset + n * p.k_stride + col + 1u]);
  const vec2 v = vec2(vs[p.v_offset + n * p.v_stride + col], vs[p.v_offset + n * p.v_stride + col + 1u]);
  const uint e = ((b * p.S + slot) * p.H + h) * p.head_dim + 2u * pair;
  if (CACHE_F16 != 0) {
    kc[e >> 1] = packHalf2x16(k);
    vc[e >> 1] = packHalf2x16(v);
  } else {
    kc[e] = floatBitsToUint(k.x);
    kc[e + 1u] = floatBitsToUint(k.y);
    vc[e] = floatBitsToUint(v.x);
    vc[e + 1u] = floatBitsToUint(v.y);
  }
}
