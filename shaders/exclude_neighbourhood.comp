#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
// LANTERN++'s rejection distribution, one workgroup per row (engine/ops/speculative.h has the
// semantics): q without the draft's listed neighbours, rescaled by 1 / (1 - their mass), where
// relax_neighbourhood moved mass onto the draft. The neighbour sum is short (count entries) and
// sequential so that it equals the CPU's; one invocation takes it.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer QB { float qv[]; };
layout(binding = 1) readonly buffer PB { float pv[]; };
layout(binding = 2) readonly buffer RB { float rv[]; };
layout(binding = 3) readonly buffer Dr { uint drafts[]; };
layout(binding = 4) readonly buffer Nb { uint neighbours[]; };
layout(binding = 5) buffer Out { float outv[]; };
layout(push_constant) uniform P {
  uint rows, vocab, q_off, p_off, relaxed_off, draft_off, out_off, count, k_max;
} p;

shared float sh_inv;

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // uniform within the workgroup
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint src = p.q_off + row * p.vocab, dst = p.out_off + row * p.vocab;
  const uint x = drafts[p.draft_off + row];
  // No draft, or nothing moved onto it: q as it is (uniform).
  if (x >= p.vocab || rv[p.relaxed_off + row * p.vocab + x] == pv[p.p_off + row * p.vocab + x]) {
    for (uint i = tid; i < p.vocab; i += wg) outv[dst + i] = qv[src + i];
    return;
  }
  if (tid == 0u) {
    precise float mass = 0.0;
    for (uint m = 1u; m <= p.count; ++m) {
      const uint y = neighbours[x * p.k_max + m];
      if (y < p.vocab && y != x) mass = mass + qv[src + y];
    }
    precise float rest = 1.0 - mass;
    sh_inv = rest > 0.0 ? recip_det(rest) : 0.0;
  }
  barrier();
  const float inv = sh_inv;
  for (uint i = tid; i < p.vocab; i += wg) {
    precise float v = qv[src + i] * inv;
    outv[dst + i] = v;
  }
  memoryBarrierBuffer();
  barrier();
  for (uint m = 1u + tid; m <= p.count; m += wg) {
    const uint y = neighbours[x * p.k_max + m];
    if (y < p.vocab && y != x) outv[dst + y] = 0.0;
  }
}
