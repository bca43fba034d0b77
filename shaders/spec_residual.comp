#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
#include "philox.glsl"
// Sampling from norm(max(p - q, 0)) (from p where that is all zero), one workgroup per position,
// by the fixed-order chunk tree of det_math.h; engine/ops/speculative.h has the semantics. With
// `resolve`, accepted positions copy their draft token instead.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer QB { float qv[]; };
layout(binding = 2) readonly buffer Pos { uint positions[]; };
layout(binding = 3) readonly buffer Acc { uint accept[]; };
layout(binding = 4) readonly buffer Draft { uint draft[]; };
layout(binding = 5) writeonly buffer Tok { uint tokens[]; };
layout(binding = 6) readonly buffer Seeds { uint seeds[]; };    // lo, hi per row, with per_row_key
layout(binding = 7) readonly buffer Rounds { uint rounds[]; };  // added to the purpose's round, per row
layout(push_constant) uniform P {
  uint rows, vocab, p_off, q_off, pos_off, acc_off, draft_off, tok_off, resolve, seed_lo, seed_hi, purpose;
  uint per_row_key, seed_off, round_off;  // 1: row `row` draws with its own key (images of a batch)
} p;

uint row, tid, wg, csize, nch, leaves;
#include "chunk_tree.glsl"

shared uint sh_chunk;
shared float sh_target;

#include "residual_weights.glsl"

void main() {
  row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;
  tid = gl_LocalInvocationID.x;
  wg = gl_WorkGroupSize.x;
  if (p.resolve != 0u && accept[p.acc_off + row] != 0u) {
    if (tid == 0u) tokens[p.tok_off + row] = draft[p.draft_off + row];
    return;
  }
  csize = chunk_size(p.vocab);
  nch = chunk_count(p.vocab);
  leaves = tree_leaves(p.vocab);

  bool from_p = false;
  float total = total_weight(false);
  if (total == 0.0) {
    from_p = true;
    total = total_weight(true);
  }
  if (total == 0.0) {
    if (tid == 0u) tokens[p.tok_off + row] = 0xFFFFFFFFu;
    return;
  }
  if (tid == 0u) {
    const uint pos = positions[p.pos_off + row];
    uvec2 seed = uvec2(p.seed_lo, p.seed_hi);
    uint purpose = p.purpose;
    if (p.per_row_key != 0u) {
      seed = uvec2(seeds[p.seed_off + 2u * row], seeds[p.seed_off + 2u * row + 1u]);
      purpose += rounds[p.round_off + row] << 8;
    }
    precise float t = philox_uniform(seed, pos, purpose, 0u) * total;
    sh_chunk = ct_descend(leaves, t);
    sh_target = t;
  }
  barrier();
  const uint c = sh_chunk;
  if (c % wg == tid) {
    float t = sh_target;
    uint last = c * csize, pick = 0xFFFFFFFFu;
    for (uint i = c * csize; i < min(c * csize + csize, p.vocab); ++i) {
      const float w = weight(i, from_p);
      if (w > 0.0) {
        last = i;
        if (t < w) {
          pick = i;
          break;
        }
        precise float r = t - w;
        t = r;
      }
    }
    tokens[p.tok_off + row] = pick != 0xFFFFFFFFu ? pick : last;
  }
}
