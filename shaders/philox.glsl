// Philox4x32-10 keyed by (seed, position, purpose, draw): bit-for-bit mirror of
// engine/ops/philox.h, which documents the key layout. Include det_math.glsl first.

uvec4 philox4x32_10(uvec4 c, uvec2 k) {
  [[unroll]] for (int r = 0; r < 10; ++r) {
    if (r > 0) k += uvec2(0x9E3779B9u, 0xBB67AE85u);
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

// seed = (low word, high word).
uvec4 philox_block(uvec2 seed, uint position, uint purpose, uint draw) {
  return philox4x32_10(uvec4(position, purpose, draw >> 2u, 0u), seed);
}

uint philox_bits(uvec2 seed, uint position, uint purpose, uint draw) {
  return philox_block(seed, position, purpose, draw)[draw & 3u];
}

float philox_to_uniform(uint x) {
  precise float u = float(x >> 8u) * 5.96046448e-8;
  return u;
}

float philox_to_gumbel(uint x) {
  float u = philox_to_uniform(x);
  if (u == 0.0) u = 2.98023224e-8;
  return -log_det(-log_det(u));
}

float philox_uniform(uvec2 seed, uint position, uint purpose, uint draw) {
  return philox_to_uniform(philox_bits(seed, position, purpose, draw));
}
