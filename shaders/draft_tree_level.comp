#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
// One level of EAGLE-2's dynamic draft tree grown on the device, one workgroup
// (engine/ops/draft_tokens.h, draft_tree_level): the candidates are each frontier row's top
// tokens; a candidate's value is its parent's times its q (precise, values below FLT_MIN 0, as
// DraftTreeBuilder); the next frontier is the k best values, ties to the lower candidate index
// (the builder's insertion order), found by k searches as top_tokens ranks tokens. Then each new
// frontier row gets its token, its state (value, ancestors' rows), the gather ids of its parent's
// drafter features and its attention row (what AttentionMaskBuilder::pack writes for it).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer TT { uint cand_tokens[]; };
layout(binding = 1) readonly buffer TV { float cand_values[]; };
layout(binding = 2) buffer St { uint state[]; };
layout(binding = 3) writeonly buffer Ch { uint choice[]; };
layout(binding = 4) writeonly buffer Tk { uint next_tokens[]; };
layout(binding = 5) writeonly buffer Ga { uint gather_ids[]; };
layout(binding = 6) writeonly buffer Rg { uint ranges[]; };
layout(binding = 7) writeonly buffer Bt { uint bits[]; };
layout(push_constant) uniform P {
  uint m, k, kc, level, state_width, cand_off, val_off, choice_off, tok_off, gather_off, range_off, bits_off, words;
  uint lo, hi, scratch0, rows, row_stride, g_base;
} p;

const uint kMaxWg = 256u, kMaxK = 64u, kNone = 0xFFFFFFFFu;  // kMaxK: ops::kMaxTopTokens
shared float sh_v[kMaxWg];
shared uint sh_i[kMaxWg];
shared uint sh_pick[kMaxK];

uint state_at(uint level, uint row) { return (level * p.k + row) * p.state_width; }

// Candidate c = i * kc + r (frontier row i, rank r): its value, or -1 where it is no candidate.
float candidate_value(uint c) {
  const uint i = c / p.kc;
  const uint s = state_at(p.level, i);
  if (state[s + 1u] == 0u || cand_tokens[p.cand_off + c] == kNone) return -1.0;
  precise float v = uintBitsToFloat(state[s]) * cand_values[p.val_off + c];
  return v >= kFloatMin ? v : 0.0;
}

bool ranks_before(float va, uint ia, float vb, uint ib) { return va > vb || (va == vb && ia < ib); }

// The best candidate ranked after (bv, bi) (bi == kNone: the best of all); kNone if none is left.
uint next_best(float bv, uint bi) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  float cv = 0.0;
  uint ci = kNone;
  for (uint c = tid; c < p.m * p.kc; c += wg) {
    const float v = candidate_value(c);
    if (v < 0.0) continue;
    if ((bi == kNone || ranks_before(bv, bi, v, c)) && (ci == kNone || ranks_before(v, c, cv, ci))) {
      cv = v;
      ci = c;
    }
  }
  sh_v[tid] = cv;
  sh_i[tid] = ci;
  barrier();
  for (uint stride = wg / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      const float ov = sh_v[tid + stride];
      const uint oi = sh_i[tid + stride], mi = sh_i[tid];
      if (oi != kNone && (mi == kNone || ranks_before(ov, oi, sh_v[tid], mi))) {
        sh_v[tid] = ov;
        sh_i[tid] = oi;
      }
    }
    barrier();
  }
  const uint found = sh_i[0];
  barrier();
  return found;
}

// The drafter slot of new row j's ancestor at depth l + 1 (l == level: j itself).
uint ancestor_slot(uint j, uint l) {
  if (l == p.level) return p.scratch0 + p.level * p.k + j;
  const uint pick = sh_pick[j], i = pick == kNone ? 0u : pick / p.kc;
  return p.scratch0 + l * p.k + state[state_at(p.level, i) + 2u + l];
}

bool visible(uint j, uint slot) {
  if (slot >= p.lo && slot < p.hi) return true;
  for (uint l = 0u; l <= p.level; ++l)
    if (ancestor_slot(j, l) == slot) return true;
  return false;
}

// pack()'s range of row j: the longest visible prefix (ancestor slots ascend with depth).
uint dense_end(uint j) {
  uint d = p.lo == 0u ? p.hi : 0u;
  for (uint l = 0u; l <= p.level; ++l)
    if (ancestor_slot(j, l) == d) ++d;
  return d;
}

void write_row(uint j) {
  const uint pick = sh_pick[j], ok = pick == kNone ? 0u : 1u, i = ok != 0u ? pick / p.kc : 0u;
  const uint in_s = state_at(p.level, i), out_s = state_at(p.level + 1u, j);
  choice[p.choice_off + j] = pick;
  state[out_s] = floatBitsToUint(ok != 0u ? candidate_value(pick) : 0.0);
  state[out_s + 1u] = ok;
  for (uint l = 0u; l < p.level; ++l) state[out_s + 2u + l] = state[in_s + 2u + l];
  state[out_s + 2u + p.level] = j;
  next_tokens[p.tok_off + j] = ok != 0u ? cand_tokens[p.cand_off + pick] : kNone;
  for (uint b = 0u; b < p.rows; ++b) gather_ids[p.gather_off + b * p.k + j] = b * p.row_stride + p.g_base + i;
  ranges[p.range_off + 2u * j] = dense_end(j);
  ranges[p.range_off + 2u * j + 1u] = ancestor_slot(j, p.level) + 1u;
}

void main() {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  float bv = 0.0;
  uint bi = kNone;
  for (uint j = 0u; j < p.k; ++j) {
    const uint c = bi == kNone && j > 0u ? kNone : next_best(bv, bi);  // uniform
    if (tid == 0u) sh_pick[j] = c;
    if (c != kNone) bv = candidate_value(c);
    bi = c;
    if (c == kNone) bv = 0.0;
  }
  barrier();
  for (uint j = tid; j < p.k; j += wg) write_row(j);
  for (uint e = tid; e < p.k * p.words; e += wg) {
    const uint j = e / p.words, w = e - j * p.words;
    const uint d = dense_end(j), end = ancestor_slot(j, p.level) + 1u;
    uint word = 0u;
    for (uint b = 0u; b < 32u; ++b) {
      const uint slot = w * 32u + b;
      if (slot >= d && slot < end && visible(j, slot)) word |= 1u << b;
    }
    bits[p.bits_off + e] = word;
  }
}
