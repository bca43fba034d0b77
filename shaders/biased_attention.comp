#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Attention of a whole sequence with an additive bias per head (T5's encoder: the relative
// position bias, the key padding mask folded in):
//   out[t, h] = sum_k softmax_k(scale * q[t, h] . k[k, h] + bias[h, t, k]) v[k, h]
// One workgroup per (query, head): its T <= MAX_KEYS scores stay in shared memory, then max, sum
// and the weighted values, each a tree over the workgroup. q, k and v are head rows (row stride,
// column offset) of one or several f32 matrices.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MAX_KEYS = 512;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) readonly buffer B { float bias[]; };
layout(binding = 4) writeonly buffer O { float o[]; };
layout(push_constant) uniform P {
  uint tokens, heads, head_dim;
  uint q_stride, q_offset, k_stride, k_offset, v_stride, v_offset, out_stride;
  float scale;
} p;

shared float scores[MAX_KEYS];
shared float part[64];

// The workgroup's max (or sum) of each lane's value, returned to every lane.
float reduce(float x, bool take_max) {
  const uint lane = gl_LocalInvocationID.x;
  part[lane] = x;
  barrier();
  for (uint w = 32; w > 0; w >>= 1) {
    if (lane < w) part[lane] = take_max ? max(part[lane], part[lane + w]) : part[lane] + part[lane + w];
    barrier();
  }
  const float r = part[0];
  barrier();
  return r;
}

void main() {
  const uint t = gl_WorkGroupID.x, h = gl_WorkGroupID.y, lane = gl_LocalInvocationID.x;
  const uint T = p.tokens, D = p.head_dim;
  const uint qb = t * p.q_stride + p.q_offset + h * D;
  float m = -3.402823466e38;
  for (uint j = lane; j < T; j += 64) {
    const uint kb = j * p.k_stride + p.k_offset + h * D;
    float s = 0.0;
    for (uint d = 0; d < D; ++d) s += q[qb + d] * k[kb + d];
    s = s * p.scale + bias[(h * T + t) * T + j];
    scores[j] = s;
    m = max(m, s);
  }
  m = reduce(m, true);
  float sum = 0.0;
  for (uint j = lane; j < T; j += 64) {
    const float e = exp(scores[j] - m);
    scores[j] = e;
    sum += e;
  }
  sum = reduce(sum, false);  // its barriers also publish every lane's exponentials
  const float inv = 1.0 / sum;
  for (uint d = lane; d < D; d += 64) {
    float acc = 0.0;
    for (uint j = 0; j < T; ++j) acc += scores[j] * v[j * p.v_stride + p.v_offset + h * D + d];
    o[t * p.out_stride + h * D + d] = acc * inv;
  }
}
