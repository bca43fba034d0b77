#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
// The residual distribution norm(max(p - q, 0)) as a row of probabilities (p itself where that
// residual is all zero), one workgroup per row; the weights and their chunk-tree total are those
// spec_residual samples from (engine/ops/speculative.h).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer QB { float qv[]; };
layout(binding = 2) writeonly buffer Out { float outv[]; };
layout(push_constant) uniform P { uint rows, vocab, p_off, q_off, out_off; } p;

uint row, tid, wg, csize, nch, leaves;
#include "chunk_tree.glsl"

#include "residual_weights.glsl"

void main() {
  row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;
  tid = gl_LocalInvocationID.x;
  wg = gl_WorkGroupSize.x;
  csize = chunk_size(p.vocab);
  nch = chunk_count(p.vocab);
  leaves = tree_leaves(p.vocab);
  bool from_p = false;
  float total = total_weight(false);
  if (total == 0.0) {
    from_p = true;
    total = total_weight(true);
  }
  // A multiply by recip_det, not a division: GPUs may divide with 2.5 ulp of error, and the
  // result must equal the CPU's bit for bit on every device (as the sampler's normalisation).
  const float inv = total > 0.0 ? recip_det(total) : 0.0;
  for (uint i = tid; i < p.vocab; i += wg) {
    precise float v = weight(i, from_p) * inv;
    outv[p.out_off + row * p.vocab + i] = v;
  }
}
