// The q|k|v projection's epilogue (engine/ops/matmul.h, MatmulFusion::rope_kv): where the kernel
// has an output pair (columns 2i, 2i + 1 of a head) of a token in hand, it rotates q and k by
// LlamaGen's 2D RoPE and writes the rotated k and the v pair into the KV cache, as
// rope_kv_write.comp does after the projection: one dispatch a layer fewer, the same bits (the
// same rope_2d.glsl and kv_store.glsl code on the same values). y's columns [0, D) are q, [D, 2D)
// k, [2D, 3D) v, D = H * head_dim; q and k are left rotated in y, as rope_kv_write leaves them.
// The includer declares CACHE_F16 (a constant id), puts ROPE_KV_PUSH in its push-constant block
// and defines ROPE_KV_BINDING0 (five bindings from it: positions, table, slots, k and v caches);
// include after the push constants and y.
#define ROPE_POS_BINDING ROPE_KV_BINDING0
#define ROPE_TABLE_BINDING (ROPE_KV_BINDING0 + 1)
#include "rope_2d.glsl"
layout(binding = ROPE_KV_BINDING0 + 2) readonly buffer Slots { uint slots[]; };
#define KC_BINDING (ROPE_KV_BINDING0 + 3)
#define VC_BINDING (ROPE_KV_BINDING0 + 4)
#include "kv_store.glsl"
// The push constants (ROPE_KV_PUSH, matmul_fold.glsl): row0, the dispatch's first token (a
// projection split into chunks of rows); T, tokens per batch row; H, head_dim, the heads; S, cache
// slots; slot_batch_stride, 0 (slots [T] shared by the batch rows) or T (slots [B, T]); pos_rows:
// token n takes position n % pos_rows; n_pos, the table's rows.

// What a token's stores share, loaded once before them (the stores could alias these buffers as
// far as the compiler knows, so loads inside the pair loop would be repeated for every pair).
struct RopeKvRow {
  uvec3 at;    // its position: row, col, flag
  uint cache;  // element of its slot's head 0 in the caches, or ~0u for a slot >= S (skipped)
};

RopeKvRow rope_kv_row(uint row) {
  const uint n = p.row0 + row, pb = (n % p.pos_rows) * 3u;
  const uint b = n / p.T, t = n - b * p.T;
  const uint slot = slots[b * p.slot_batch_stride + t];
  return RopeKvRow(uvec3(pos[pb], pos[pb + 1u], pos[pb + 2u]),
                   slot < p.S ? (b * p.S + slot) * p.H * p.head_dim : 0xFFFFFFFFu);
}

// Output pair v (columns col, col + 1; col even) of token r, for y[yi].
void rope_kv_store(RopeKvRow r, uint col, uint yi, vec2 v) {
  const uint D = p.H * p.head_dim, part = col / D, c = col - part * D;
  const uint pair = (c % p.head_dim) >> 1;
  if (part < 2u) v = rope_rotate(v, rope_cos_sin_at(r.at, pair, p.head_dim, p.n_pos));
  y[yi] = v.x;
  y[yi + 1u] = v.y;
  if (part == 0u || r.cache == 0xFFFFFFFFu) return;
  if (part == 1u)
    k_store(r.cache + c, v);
  else
    v_store(r.cache + c, v);
}
