#pragma once
// Writes the k and v rows of new tokens into KV-cache slots (after RoPE), for attention.
#include "engine/ops/head_rows.h"

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

}  // namespace vkspec::ops
