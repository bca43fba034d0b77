#pragma once
// Attention over a whole sequence with an additive bias per head and query (T5's encoder: its
// relative position bias, with the key padding mask folded in as a large negative value):
//   out[t, h] = sum_k softmax_k(scale * q[t, h] . k[k, h] + bias[h, t, k]) v[k, h]
// Bidirectional, no KV cache: a prompt's encoding, once per prompt. f32 throughout.
#include "engine/ops/head_rows.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// The most tokens one call takes (T5's longest input, 512).
inline constexpr int64_t kBiasedAttentionMaxTokens = 512;

// q, k, v: head rows of the same tokens, heads and head_dim (e.g. HeadRows::columns of a fused
// q|k|v matrix); bias: f32 [heads, tokens, tokens]; out: f32 [tokens, heads * head_dim], not
// overlapping the inputs. scale: T5 uses 1 (no 1/sqrt(head_dim)).
void biased_attention(CommandStream& s, const HeadRows& q, const HeadRows& k, const HeadRows& v, const TensorView& bias,
                      const TensorView& out, float scale = 1.0f);

}  // namespace vkspec::ops
