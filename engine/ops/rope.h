#pragma once
// LlamaGen's 2D rotary position embedding (precompute_freqs_cis_2d + apply_rotary_emb).
#include <cstdint>
#include <vector>

#include "engine/ops/head_rows.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

// Where one token sits: grid row and column, or flag != 0 for a condition (class / text) token,
// which LlamaGen gives cos = sin = 0 (its q and k become zero).
struct RopePosition {
  int32_t row = 0, col = 0, flag = 0;
};

// LlamaGen's layout: the first cls_tokens sequence positions are condition tokens, then image
// tokens in raster order on a grid x grid image.
RopePosition llamagen_position(int64_t index, int64_t cls_tokens, int64_t grid);

// The cos/sin table [n_pos, head_dim / 4, 2]: entry (t, j) = (cos, sin)(t * f_j) with
// f_j = 1 / base^(2j / (head_dim / 2)). Computed like LlamaGen (f_j and the angle in float32),
// with cos/sin evaluated in double and rounded, i.e. correctly rounded float32 cos/sin.
std::vector<float> rope_2d_cos_sin(int64_t head_dim, int64_t n_pos, float base = 10000.0f);
// The same table uploaded as f32 [n_pos, head_dim / 4, 2] (n_pos = grid size).
Tensor rope_2d_table(Context& ctx, int64_t head_dim, int64_t n_pos, float base = 10000.0f);

// A LLaMA-style 1D RoPE (Hugging Face's: pair i rotates by position * base^(-2i / head_dim)) run by
// the 2D kernels unchanged: the table holds the lower half of the frequencies for every position
// in rows [0, n_pos) and the upper half in rows [n_pos, 2 n_pos), and sequence position p becomes
// (row p, col n_pos + p). Pairs are interleaved (2i, 2i + 1) as the kernels rotate them; a
// checkpoint in Hugging Face's rotate-half layout has its q and k rows permuted at conversion
// (tools/convert_janus.py). f_i and the angle in float32 as transformers computes them.
RopePosition sequence_position(int64_t index, int64_t n_pos);
// [2 n_pos, head_dim / 4, 2]
std::vector<float> rope_1d_cos_sin(int64_t head_dim, int64_t n_pos, float base = 10000.0f);
Tensor rope_1d_table(Context& ctx, int64_t head_dim, int64_t n_pos, float base = 10000.0f);

// y = rope(x). x and y: head rows of equal tokens / heads / head_dim (head_dim % 4 == 0); y may be
// x itself (in place). Rotating q and k of the fused wqkv output [T, 3 * dim] in one dispatch:
// HeadRows::columns(qkv, 0, 2 * n_head, head_dim) as both x and y.
// positions: i32 or u32 [P, 3] of (row, col, flag); token n uses row n % P, so P = T per batch
// row serves all B batch rows of [B * T] tokens. Coordinates beyond the table clamp to its last
// row (callers keep them < n_pos). table: from rope_2d_table with the same head_dim.
void rope_2d(CommandStream& s, const HeadRows& x, const HeadRows& y, const TensorView& positions,
             const TensorView& table);

// rope_2d's checks of x (the rows it rotates), positions and table, for the ops that fuse it;
// throws naming op.
void check_rope_2d_args(const char* op, const HeadRows& x, const TensorView& positions, const TensorView& table);

}  // namespace vkspec::ops
