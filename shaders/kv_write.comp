#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Stores the k and v head rows of new tokens (token n = b * T + t) into cache slot slots[t] of
// batch row b (kv_store.glsl). One invocation per element pair. Slots >= S are skipped.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CACHE_F16 = 0;
layout(binding = 0) readonly buffer Slots { uint slots[]; };
layout(binding = 1) readonly buffer KS { float ks[]; };
layout(binding = 2) readonly buffer VS { float vs[]; };
#define KC_BINDING 3
#define VC_BINDING 4
#include "kv_store.glsl"
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
  kv_store(((b * p.S + slot) * p.H + h) * p.head_dim + 2u * pair, k, v);
}
