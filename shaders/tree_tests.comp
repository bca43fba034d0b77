#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
#include "philox.glsl"
// Every test of a candidate tree in one dispatch (engine/ops/speculative.h, tree_tests): one
// workgroup per node p walks p's children in index order against the running residual r (r = p's
// probabilities, then norm(max(r - q_c, 0)) after each child c, as residual_distribution), tests
// each with spec_accept's rule, and finally draws p's next token from r as spec_residual_sample
// with a zero q. The same arithmetic as those three ops (precise differences, chunk-tree totals,
// recip_det), so the results equal theirs bit for bit. r lives in the node's scratch row.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };      // [M, V] the nodes' target rows
layout(binding = 1) readonly buffer QB { float qv[]; };      // [M, V] the draft rows of the children
layout(binding = 2) readonly buffer Tok { uint draft[]; };   // [M] the children's tokens
layout(binding = 3) readonly buffer Par { int parent[]; };   // [M] parent index, -1 for the root
layout(binding = 4) readonly buffer Pos { uvec2 pos[]; };    // [M] (accept position, final position)
layout(binding = 5) buffer Scratch { float rv[]; };          // [M, V] running residuals
layout(binding = 6) writeonly buffer Acc { uint accept[]; }; // [M]
layout(binding = 7) writeonly buffer Fin { uint final_token[]; };  // [M]
layout(binding = 8) readonly buffer Seeds { uvec2 seeds[]; };      // [M] (lo, hi), with per_row_key
layout(binding = 9) readonly buffer Rounds { uvec2 rounds[]; };    // [M] (accept round, residual round)
layout(push_constant) uniform P {
  uint nodes, vocab, seed_lo, seed_hi, accept_purpose0, residual_purpose;
  uint per_row_key;  // 1: each row draws with its own seed and rounds (the trees of a batch's images)
} p;

uint tid, wg, csize, nch, leaves;
#include "chunk_tree.glsl"

shared uint sh_chunk;
shared float sh_target;

// The weight of token i: max(r_i - q_i, 0) with differences below FLT_MIN as 0 (child row c), or
// r_i itself (c < 0: the final draw's zero q; with from_r, the fallback where the residual is 0).
float weight(uint base, int c, uint i, bool from_r) {
  const float a = rv[base + i];
  if (from_r || c < 0) return a >= kFloatMin ? a : 0.0;
  precise float d = a - qv[uint(c) * p.vocab + i];
  return d >= kFloatMin ? d : 0.0;
}

float total_weight(uint base, int c, bool from_r) {
  for (uint k = tid; k < leaves; k += wg) {
    precise float s = 0.0;
    if (k < nch) {
      for (uint i = k * csize; i < min(k * csize + csize, p.vocab); ++i) s = s + weight(base, c, i, from_r);
    }
    ct_node[leaves + k] = s;
  }
  ct_combine(leaves);
  return ct_node[1];
}

void main() {
  const uint node = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (node >= p.nodes) return;
  tid = gl_LocalInvocationID.x;
  wg = gl_WorkGroupSize.x;
  csize = chunk_size(p.vocab);
  nch = chunk_count(p.vocab);
  leaves = tree_leaves(p.vocab);
  const uint base = node * p.vocab;
  const uvec2 seed = uvec2(p.seed_lo, p.seed_hi);
  for (uint i = tid; i < p.vocab; i += wg) rv[base + i] = pv[base + i];
  barrier();

  uint sibling = 0u;
  for (uint c = node + 1u; c < p.nodes; ++c) {  // uniform: every invocation reads the same parent
    if (parent[c] < 0) break;                     // the next tree's root: no more children of node
    if (parent[c] != int(node)) continue;
    if (draft[c] >= p.vocab) {  // uniform: a child without a candidate (kNoToken) is rejected, r unchanged
      if (tid == 0u) accept[c] = 0u;
      continue;
    }
    if (tid == 0u) {
      const uint x = draft[c];
      uint ok = 0u;
      if (x < p.vocab) {
        const float a = rv[base + x], b = qv[c * p.vocab + x];
        uvec2 key = seed;
        uint round = sibling;  // added to the purpose_word's round
        if (p.per_row_key != 0u) {
          key = seeds[c];
          round += rounds[c].x;
        }
        const float u = philox_uniform(key, pos[c].x, p.accept_purpose0 + (round << 8u), 0u);
        precise float ub = u * b;
        ok = (a > 0.0 && (a >= b || ub < a)) ? 1u : 0u;
      }
      accept[c] = ok;
    }
    barrier();  // the test read r before it becomes the next residual
    bool from_r = false;
    float total = total_weight(base, int(c), false);
    if (total == 0.0) {
      from_r = true;
      total = total_weight(base, int(c), true);
    }
    const float inv = total > 0.0 ? recip_det(total) : 0.0;
    // Each invocation rewrites only the entries it reads here, after every total is known.
    for (uint i = tid; i < p.vocab; i += wg) {
      precise float v = weight(base, int(c), i, from_r) * inv;
      rv[base + i] = v;
    }
    barrier();
    ++sibling;
  }

  // The node's next token from the last residual (spec_residual_sample against a zero q).
  bool from_r = false;
  float total = total_weight(base, -1, false);
  if (total == 0.0) {
    from_r = true;
    total = total_weight(base, -1, true);
  }
  if (total == 0.0) {
    if (tid == 0u) final_token[node] = 0xFFFFFFFFu;
    return;
  }
  if (tid == 0u) {
    const uvec2 key = p.per_row_key != 0u ? seeds[node] : seed;
    const uint purpose = p.residual_purpose + (p.per_row_key != 0u ? rounds[node].y << 8u : 0u);
    precise float t = philox_uniform(key, pos[node].y, purpose, 0u) * total;
    sh_chunk = ct_descend(leaves, t);
    sh_target = t;
  }
  barrier();
  const uint ch = sh_chunk;
  if (ch % wg == tid) {
    float t = sh_target;
    uint last = ch * csize, pick = 0xFFFFFFFFu;
    for (uint i = ch * csize; i < min(ch * csize + csize, p.vocab); ++i) {
      const float w = weight(base, -1, i, from_r);
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
    final_token[node] = pick != 0xFFFFFFFFu ? pick : last;
  }
}
