#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// A row's k most likely tokens, one workgroup per row (engine/ops/draft_tokens.h): rank r is a
// workgroup-wide search for the best key ranked after rank r - 1's (q descending, ties to the
// smaller id), as gsd_group_mass walks a ranking: k searches of the row, no sort. Keys compare
// exactly, so the result does not depend on the workgroup or subgroup size.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer QB { float qv[]; };
layout(binding = 1) writeonly buffer Tok { uint tokens[]; };
layout(binding = 2) writeonly buffer Val { float values[]; };
layout(push_constant) uniform P { uint rows, vocab, k, q_off, tok_off, val_off; } p;

const uint kMaxWg = 256u, kNone = 0xFFFFFFFFu;
shared float sh_q[kMaxWg];
shared uint sh_i[kMaxWg];

// Whether token (qa, ia) ranks before (qb, ib).
bool ranks_before(float qa, uint ia, float qb, uint ib) { return qa > qb || (qa == qb && ia < ib); }

// The best-ranked token after (bq, bi) (bi == kNone: the best of the row); kNone if none is left.
uint next_best(uint src, float bq, uint bi) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  float cq = 0.0;
  uint ci = kNone;
  for (uint y = tid; y < p.vocab; y += wg) {
    const float qy = qv[src + y];
    const bool after = bi == kNone || ranks_before(bq, bi, qy, y);
    if (after && (ci == kNone || ranks_before(qy, y, cq, ci))) {
      cq = qy;
      ci = y;
    }
  }
  sh_q[tid] = cq;
  sh_i[tid] = ci;
  barrier();
  for (uint stride = wg / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      const float oq = sh_q[tid + stride];
      const uint oi = sh_i[tid + stride], mi = sh_i[tid];
      if (oi != kNone && (mi == kNone || ranks_before(oq, oi, sh_q[tid], mi))) {
        sh_q[tid] = oq;
        sh_i[tid] = oi;
      }
    }
    barrier();
  }
  const uint found = sh_i[0];
  barrier();  // sh_i is rewritten by the next search
  return found;
}

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // uniform within the workgroup
  const uint src = p.q_off + row * p.vocab, out0 = row * p.k;
  float bq = 0.0;
  uint bi = kNone;
  bool ended = false;
  for (uint r = 0u; r < p.k; ++r) {
    if (!ended) {
      const uint y = next_best(src, bq, bi);  // uniform: every invocation read the same result
      ended = y == kNone || !(qv[src + y] > 0.0);
      bq = ended ? 0.0 : qv[src + y];
      bi = y;
    }
    if (gl_LocalInvocationID.x == 0u) {
      tokens[p.tok_off + out0 + r] = ended ? kNone : bi;
      values[p.val_off + out0 + r] = ended ? 0.0 : bq;
    }
  }
}
