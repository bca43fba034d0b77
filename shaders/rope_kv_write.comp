#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rope_2d on q and k, then kv_write of k and v, in one dispatch (one per layer fewer: on CPU
// drivers a dispatch costs tens of microseconds however small). q and k are rotated in place, as
// rope_2d leaves them, and the rotated k and v go to cache slot slots[t] of batch row b (token
// n = b * T + t; slots >= S skipped). One invocation per element pair of a head; q, k and v may be
// columns of one matrix (the fused wqkv output).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CACHE_F16 = 0;
#include "rope_2d.glsl"
layout(binding = 2) readonly buffer Slots { uint slots[]; };
layout(binding = 3) buffer Q { float q[]; };
layout(binding = 4) buffer K { float k[]; };
layout(binding = 5) readonly buffer V { float v[]; };
#define KC_BINDING 6
#define VC_BINDING 7
#include "kv_store.glsl"
layout(push_constant) uniform P {
  uint tokens, T, H, head_dim, S;
  uint q_stride, q_offset, k_stride, k_offset, v_stride, v_offset;
  uint slot_batch_stride;  // 0: slots [T] shared by the batch rows; T: slots [B, T]
  uint pos_rows;           // token n uses position n % pos_rows
  uint n_pos;              // table rows; larger coordinates clamp to the last
} p;

void main() {
  const uint i = linear_invocation();
  const uint pairs = p.head_dim >> 1;
  if (i >= p.tokens * p.H * pairs) return;
  const uint pair = i % pairs, nh = i / pairs;
  const uint h = nh % p.H, n = nh / p.H;
  const vec2 cs = rope_cos_sin(n % p.pos_rows, pair, p.head_dim, p.n_pos);
  const uint col = h * p.head_dim + 2u * pair;
  const uint qi = p.q_offset + n * p.q_stride + col, ki = p.k_offset + n * p.k_stride + col;
  const vec2 qr = rope_rotate(vec2(q[qi], q[qi + 1u]), cs), kr = rope_rotate(vec2(k[ki], k[ki + 1u]), cs);
  q[qi] = qr.x;
  q[qi + 1u] = qr.y;
  k[ki] = kr.x;
  k[ki + 1u] = kr.y;
  const uint b = n / p.T, t = n - b * p.T;
  const uint slot = slots[b * p.slot_batch_stride + t];
  if (slot >= p.S) return;
  const uint vi = p.v_offset + n * p.v_stride + col;
  kv_store(((b * p.S + slot) * p.H + h) * p.head_dim + 2u * pair, kr, vec2(v[vi], v[vi + 1u]));
}
