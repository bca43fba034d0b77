#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// GSD's group masses, one workgroup per row (engine/ops/speculative.h has the semantics): the
// draft's neighbours in the target's ranking are found one at a time, each a workgroup-wide
// search for the nearest key past the last one found (a group is 2h - 1 searches of the row, h
// about 7, cheaper than sorting the row); then one invocation filters them and sums in group
// order, so the sums are the CPU reference's bit for bit.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer QB { float qv[]; };
layout(binding = 2) readonly buffer Dr { uint drafts[]; };
layout(binding = 3) readonly buffer Em { float emb[]; };
layout(binding = 4) writeonly buffer OutP { float out_p[]; };
layout(binding = 5) writeonly buffer OutQ { float out_q[]; };
layout(push_constant) uniform P {
  uint rows, vocab, p_off, q_off, draft_off, outp_off, outq_off, below, above, dim;
  float gap, dist2;
} p;

const uint kMaxWg = 64u, kMaxGroup = 64u, kNone = 0xFFFFFFFFu;
shared float sh_p[kMaxWg];
shared uint sh_i[kMaxWg];
shared uint sh_group[kMaxGroup];
shared uint sh_n;

// Keys order tokens as an ascending sort of probabilities with ties by token id.
bool key_less(float pa, uint ia, float pb, uint ib) { return pa < pb || (pa == pb && ia < ib); }

// The nearest key beyond (bp, bi): the largest below it (down) or the smallest above it.
uint nearest_beyond(uint src, float bp, uint bi, bool down) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  float cp = 0.0;
  uint ci = kNone;
  for (uint y = tid; y < p.vocab; y += wg) {
    const float py = pv[src + y];
    const bool beyond = down ? key_less(py, y, bp, bi) : key_less(bp, bi, py, y);
    const bool better = ci == kNone || (down ? key_less(cp, ci, py, y) : key_less(py, y, cp, ci));
    if (beyond && better) {
      cp = py;
      ci = y;
    }
  }
  sh_p[tid] = cp;
  sh_i[tid] = ci;
  barrier();
  for (uint stride = wg / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      const float op = sh_p[tid + stride];
      const uint oi = sh_i[tid + stride];
      const uint mi = sh_i[tid];
      const bool take = oi != kNone && (mi == kNone || (down ? key_less(sh_p[tid], mi, op, oi) : key_less(op, oi, sh_p[tid], mi)));
      if (take) {
        sh_p[tid] = op;
        sh_i[tid] = oi;
      }
    }
    barrier();
  }
  const uint found = sh_i[0];
  barrier();  // sh_i is rewritten by the next search
  return found;
}

float squared_distance(uint x, uint y) {
  precise float d = 0.0;
  for (uint e = 0u; e < p.dim; ++e) {
    precise float t = emb[x * p.dim + e] - emb[y * p.dim + e];
    d = d + t * t;
  }
  return d;
}

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // uniform within the workgroup
  const uint tid = gl_LocalInvocationID.x;
  const uint src = p.p_off + row * p.vocab, qsrc = p.q_off + row * p.vocab;
  const uint x = drafts[p.draft_off + row];
  if (x >= p.vocab) {  // no draft: nothing to accept (uniform)
    if (tid == 0u) {
      out_p[p.outp_off + row] = 0.0;
      out_q[p.outq_off + row] = 0.0;
    }
    return;
  }
  const float px = pv[src + x];
  if (tid == 0u) sh_n = 0u;
  for (uint side = 0u; side < 2u; ++side) {
    const bool down = side == 0u;
    float bp = px;
    uint bi = x;
    for (uint m = 0u; m < (down ? p.below : p.above); ++m) {
      const uint y = nearest_beyond(src, bp, bi, down);
      if (y == kNone) break;  // uniform: every invocation read the same result
      if (tid == 0u) sh_group[sh_n++] = y;
      bp = pv[src + y];
      bi = y;
    }
  }
  if (tid != 0u) return;
  precise float a = px;
  precise float b = qv[qsrc + x];
  for (uint m = 0u; m < sh_n; ++m) {
    const uint y = sh_group[m];
    const float py = pv[src + y];
    if (p.gap < 1.0 && !(abs(py - px) < p.gap)) continue;
    if (p.dist2 < 4.0 && !(squared_distance(x, y) < p.dist2)) continue;
    a = a + py;
    b = b + qv[qsrc + y];
  }
  out_p[p.outp_off + row] = a;
  out_q[p.outq_off + row] = b;
}
