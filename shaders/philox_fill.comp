#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
#include "philox.glsl"
// out[r][i] = draw first_draw + i of (seed, positions[r], purpose) as bits, uniform or Gumbel.
// One invocation per four consecutive draws of a row.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer Pos { uint positions[]; };
layout(binding = 1) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform P {
  uint rows, draws, blocks_per_row, first_draw, pos_off, out_off, kind, seed_lo, seed_hi, purpose;
} p;

void main() {
  const uint g = linear_invocation();
  if (g >= p.rows * p.blocks_per_row) return;
  const uint r = g / p.blocks_per_row, j0 = (g % p.blocks_per_row) * 4u;
  const uint pos = positions[p.pos_off + r];
  const uvec2 seed = uvec2(p.seed_lo, p.seed_hi);
  for (uint j = j0; j < min(j0 + 4u, p.draws); ++j) {
    const uint x = philox_bits(seed, pos, p.purpose, p.first_draw + j);
    uint v = x;
    if (p.kind == 1u) v = floatBitsToUint(philox_to_uniform(x));
    else if (p.kind == 2u) v = floatBitsToUint(philox_to_gumbel(x));
    outv[p.out_off + r * p.draws + j] = v;
  }
}
