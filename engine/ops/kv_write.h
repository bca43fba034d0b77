#pragma once
// Writes the k and v rows of new tokens into KV-cache slots (after RoPE), for attention.
#include "engine/ops/head_rows.h"
#include "engine/ops/rope.h"

namespace vkspec::ops {

// k, v: head rows of B * T tokens (token n = b * T + t), H heads of head_dim (even), e.g.
// HeadRows::columns(qkv, dim, H, Dh) and HeadRows::columns(qkv, 2 * dim, H, Dh).
// k_cache, v_cache: [B, S, H, head_dim], both f32 or both f16 (rounded to nearest even on
// devices that round packHalf2x16 that way).
// slots: u32 [T] (shared by the batch rows) or [B, T]: token (b, t) goes to slot slots[t] of batch
// row b. Contract: slots of one batch row are distinct (duplicates race) and < S; a slot >= S is
// skipped rather than written out of bounds.
void kv_write(CommandStream& s, const HeadRows& k, const HeadRows& v, int64_t batch, const TensorView& slots,
              const TensorView& k_cache, const TensorView& v_cache);

// rope_2d(q, q) and rope_2d(k, k) (positions, table as there), then kv_write(k, v, ...) in one
// dispatch, with the same results bit for bit (shaders/rope_2d.glsl and kv_store.glsl are shared):
// a transformer layer's RoPE and cache write. q, k and v: equal tokens, heads and head_dim, in one
// buffer or several but with no element in common.
struct Rope2dKvWrite {
  HeadRows q, k, v;
  int64_t batch = 1;
  TensorView positions, table;         // as rope_2d's
  TensorView slots, k_cache, v_cache;  // as kv_write's
};
void rope_2d_kv_write(CommandStream& s, const Rope2dKvWrite& a);

// rope_2d_kv_write's checks (throws naming op), and the numbers its shader and the q|k|v
// projections' fold of it (MatmulFusion::rope_kv, shaders/rope_kv_fold.glsl) take.
struct RopeKvLayout {
  uint32_t T = 0;                    // tokens per batch row
  uint32_t S = 0;                    // cache slots
  uint32_t slot_batch_stride = 0;    // 0: slots [T] shared by the batch rows; T: slots [B, T]
  uint32_t pos_rows = 0, n_pos = 0;  // positions' and the table's rows
};
RopeKvLayout check_rope_2d_kv_write(const char* op, const Rope2dKvWrite& a);

}  // namespace vkspec::ops
