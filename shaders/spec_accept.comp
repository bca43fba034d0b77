#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
#include "philox.glsl"
// Acceptance test of drafted tokens, one invocation per position (engine/ops/speculative.h):
// accept <=> a > 0 and (a >= b or u * b < a), a = p(x), b = q(x) gathered from rows of V, or
// given directly (gathered = 0, V = 1).
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer PB { float pv[]; };
layout(binding = 1) readonly buffer QB { float qv[]; };
layout(binding = 2) readonly buffer Draft { uint draft[]; };
layout(binding = 3) readonly buffer Pos { uint positions[]; };
layout(binding = 4) writeonly buffer Acc { uint accept[]; };
layout(binding = 5) readonly buffer Seeds { uint seeds[]; };    // lo, hi per row, with per_row_key
layout(binding = 6) readonly buffer Rounds { uint rounds[]; };  // added to the purpose's round, per row
layout(push_constant) uniform P {
  uint rows, vocab, p_off, q_off, draft_off, pos_off, acc_off, gathered, seed_lo, seed_hi, purpose;
  uint per_row_key, seed_off, round_off;  // 1: row j draws with its own key (images of a batch)
} p;

void main() {
  const uint j = linear_invocation();
  if (j >= p.rows) return;
  uint idx = j;
  if (p.gathered != 0u) {
    const uint x = draft[p.draft_off + j];
    if (x >= p.vocab) {
      accept[p.acc_off + j] = 0u;
      return;
    }
    idx = j * p.vocab + x;
  }
  const float a = pv[p.p_off + idx], b = qv[p.q_off + idx];
  uvec2 seed = uvec2(p.seed_lo, p.seed_hi);
  uint purpose = p.purpose;
  if (p.per_row_key != 0u) {
    seed = uvec2(seeds[p.seed_off + 2u * j], seeds[p.seed_off + 2u * j + 1u]);
    purpose += rounds[p.round_off + j] << 8;
  }
  const float u = philox_uniform(seed, positions[p.pos_off + j], purpose, 0u);
  precise float ub = u * b;
  accept[p.acc_off + j] = (a > 0.0 && (a >= b || ub < a)) ? 1u : 0u;
}
