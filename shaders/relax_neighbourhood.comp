#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// LANTERN's relaxed target, one workgroup per row (engine/ops/speculative.h has the semantics):
// the row is copied, then the mass of the draft's admitted neighbours is moved onto the draft.
// The walk over the neighbour list is sequential by nature (each step depends on the running
// total) and short (k entries), so one invocation does it; the copy and the zeroing are shared.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer Dr { uint drafts[]; };
layout(binding = 2) readonly buffer Nb { uint neighbours[]; };
layout(binding = 3) buffer Out { float outv[]; };
layout(push_constant) uniform P { uint rows, vocab, p_off, draft_off, out_off, k, k_max; float delta, per_mass; } p;

shared uint sh_end;
shared float sh_moved;

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // uniform within the workgroup
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint src = p.p_off + row * p.vocab, dst = p.out_off + row * p.vocab;
  for (uint i = tid; i < p.vocab; i += wg) outv[dst + i] = pv[src + i];
  const uint x = drafts[p.draft_off + row];
  if (x >= p.vocab) return;  // no draft: the row stays as it is (uniform)
  if (tid == 0u) {
    // delta + per_mass * p(x): LANTERN's additive budget or LANTERN++'s multiplicative one.
    precise float budget = p.delta + p.per_mass * pv[src + x];
    precise float moved = 0.0;
    uint end = 1u;
    for (uint m = 1u; m < p.k; ++m) {
      const uint y = neighbours[x * p.k_max + m];
      if (y >= p.vocab || y == x) continue;
      precise float next = moved + pv[src + y];
      if (next > budget) break;
      moved = next;
      end = m + 1u;
    }
    sh_end = end;
    sh_moved = moved;
  }
  memoryBarrierBuffer();
  barrier();
  for (uint m = 1u + tid; m < sh_end; m += wg) {
    const uint y = neighbours[x * p.k_max + m];
    if (y < p.vocab && y != x) outv[dst + y] = 0.0;
  }
  if (tid == 0u) {
    precise float px = pv[src + x] + sh_moved;
    outv[dst + x] = px;
  }
}
