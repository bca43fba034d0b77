#pragma once
// Per-token rows of attention heads that may sit inside a wider f32 matrix, so RoPE, the KV-cache
// write and attention read q, k and v straight out of the fused wqkv output without copies.
// Element (token n, head h, d) lives at data[col_offset + n * row_stride + h * head_dim + d]
// (element offsets relative to data.offset).
#include <cstdint>
#include <string>

#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

struct HeadRows {
  TensorView data;  // f32
  int64_t tokens = 0, heads = 0, head_dim = 0;
  int64_t row_stride = 0;  // elements between tokens; >= heads * head_dim
  int64_t col_offset = 0;  // elements before head 0 of token 0

  // data is exactly [tokens, heads * head_dim].
  static HeadRows packed(const TensorView& data, int64_t tokens, int64_t heads, int64_t head_dim) {
    return {data, tokens, heads, head_dim, heads * head_dim, 0};
  }
  // Columns [col_offset, col_offset + heads * head_dim) of a 2D matrix data [tokens, width],
  // e.g. the k part of wqkv output [T, 3 * dim] is columns(qkv, dim, n_head, head_dim).
  static HeadRows columns(const TensorView& data, int64_t col_offset, int64_t heads, int64_t head_dim) {
    return {data,     data.shape.rank == 2 ? data.shape[0] : 0, heads,
            head_dim, data.shape.rank == 2 ? data.shape[1] : 0, col_offset};
  }

  int64_t width() const { return heads * head_dim; }
  std::string str() const {
    return std::to_string(tokens) + " tokens x " + std::to_string(heads) + " heads x " + std::to_string(head_dim) +
           " (row stride " + std::to_string(row_stride) + ", offset " + std::to_string(col_offset) + ") in " +
           data.shape.str();
  }
  // Throws naming op unless this is an f32 layout that stays inside data.
  void validate(const char* op, const char* what) const {
    require(data.dtype == DType::F32, op,
            [&] { return std::string(what) + " must be f32, got " + dtype_name(data.dtype); });
    require(tokens > 0 && heads > 0 && head_dim > 0 && col_offset >= 0 && row_stride >= width(), op,
            [&] { return std::string(what) + ": bad layout " + str(); });
    require(col_offset + (tokens - 1) * row_stride + width() <= data.numel(), op,
            [&] { return std::string(what) + ": layout " + str() + " runs past the tensor"; });
    require(tokens * row_stride <= (int64_t{1} << 32) - 1, op,
            [&] { return std::string(what) + ": too large for 32-bit indexing"; });
  }
};

}  // namespace vkspec::ops
