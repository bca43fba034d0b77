#include "engine/ops/rope.h"

#include <cmath>

#include "shaders/shader_ids.h"

namespace vkspec::ops {

RopePosition llamagen_position(int64_t index, int64_t cls_tokens, int64_t grid) {
  if (index < cls_tokens) return {0, 0, 1};
  const int64_t k = index - cls_tokens;
  return {static_cast<int32_t>(k / grid), static_cast<int32_t>(k % grid), 0};
}

std::vector<float> rope_2d_cos_sin(int64_t head_dim, int64_t n_pos, float base) {
  require(head_dim > 0 && head_dim % 4 == 0, "rope_2d",
          [&] { return "head_dim must be a positive multiple of 4, got " + std::to_string(head_dim); });
  const int64_t half = head_dim / 2, quarter = head_dim / 4;
  std::vector<float> t(static_cast<size_t>(n_pos * quarter * 2));
  for (int64_t j = 0; j < quarter; ++j) {
    // torch: 1.0 / (base ** (arange(0, half, 2).float() / half)), all float32.
    const float expo = static_cast<float>(2 * j) / static_cast<float>(half);
    const float freq = 1.0f / static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(expo)));
    for (int64_t r = 0; r < n_pos; ++r) {
      const float angle = static_cast<float>(r) * freq;  // torch.outer in float32
      t[static_cast<size_t>((r * quarter + j) * 2)] = static_cast<float>(std::cos(static_cast<double>(angle)));
      t[static_cast<size_t>((r * quarter + j) * 2 + 1)] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
  return t;
}

Tensor rope_2d_table(Context& ctx, int64_t head_dim, int64_t n_pos, float base) {
  require(n_pos > 0, "rope_2d", "table needs at least one position");
  const auto t = rope_2d_cos_sin(head_dim, n_pos, base);
  Tensor table = ctx.tensor(DType::F32, {n_pos, head_dim / 4, 2}, "rope_2d table");
  ctx.upload(table, t.data(), t.size() * 4);
  return table;
}

RopePosition sequence_position(int64_t index, int64_t n_pos) {
  return {static_cast<int32_t>(index), static_cast<int32_t>(n_pos + index), 0};
}

std::vector<float> rope_1d_cos_sin(int64_t head_dim, int64_t n_pos, float base) {
  require(head_dim > 0 && head_dim % 4 == 0, "rope_1d",
          [&] { return "head_dim must be a positive multiple of 4, got " + std::to_string(head_dim); });
  const int64_t quarter = head_dim / 4;
  std::vector<float> t(static_cast<size_t>(2 * n_pos * quarter * 2));
  for (int64_t i = 0; i < 2 * quarter; ++i) {
    // transformers: 1.0 / (base ** (arange(0, head_dim, 2).float() / head_dim)), float32.
    const float expo = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    const float freq = 1.0f / static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(expo)));
    const int64_t half = i / quarter, j = i % quarter;  // rows [0, n_pos) hold i < quarter
    for (int64_t r = 0; r < n_pos; ++r) {
      const float angle = static_cast<float>(r) * freq;
      const size_t at = static_cast<size_t>(((half * n_pos + r) * quarter + j) * 2);
      t[at] = static_cast<float>(std::cos(static_cast<double>(angle)));
      t[at + 1] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
  return t;
}

Tensor rope_1d_table(Context& ctx, int64_t head_dim, int64_t n_pos, float base) {
  require(n_pos > 0, "rope_1d", "table needs at least one position");
  const auto t = rope_1d_cos_sin(head_dim, n_pos, base);
  Tensor table = ctx.tensor(DType::F32, {2 * n_pos, head_dim / 4, 2}, "rope_1d table");
  ctx.upload(table, t.data(), t.size() * 4);
  return table;
}

void check_rope_2d_args(const char* op, const HeadRows& x, const TensorView& positions, const TensorView& table) {
  x.validate(op, "x");
  require(x.head_dim % 4 == 0, op,
          [&] { return "head_dim must be a multiple of 4, got " + std::to_string(x.head_dim); });
  require(positions.dtype == DType::I32 || positions.dtype == DType::U32, op, "positions must be i32 or u32");
  require(positions.shape.rank == 2 && positions.shape[1] == 3 && positions.shape[0] > 0 &&
              x.tokens % positions.shape[0] == 0,
          op, [&] {
            return "positions must be [P, 3] with P dividing " + std::to_string(x.tokens) + " tokens, got " +
                   positions.shape.str();
          });
  require(table.dtype == DType::F32 && table.shape.rank == 3 && table.shape[0] > 0 &&
              table.shape[1] == x.head_dim / 4 && table.shape[2] == 2,
          op, [&] {
            return "table must be f32 [n_pos, " + std::to_string(x.head_dim / 4) + ", 2], got " + table.shape.str();
          });
}

void rope_2d(CommandStream& s, const HeadRows& x, const HeadRows& y, const TensorView& positions,
             const TensorView& table) {
  const char* op = "rope_2d";
  check_rope_2d_args(op, x, positions, table);
  y.validate(op, "y");
  require(x.tokens == y.tokens && x.heads == y.heads && x.head_dim == y.head_dim, op,
          [&] { return "x " + x.str() + " and y " + y.str() + " differ"; });
  const bool same_buffer = x.data.buffer == y.data.buffer;
  require(!same_buffer ||
              (x.data.offset == y.data.offset && x.row_stride == y.row_stride && x.col_offset == y.col_offset) ||
              x.data.offset + x.data.bytes <= y.data.offset || y.data.offset + y.data.bytes <= x.data.offset,
          op, "y must be x itself or not overlap it");
  Context& ctx = s.context();
  const uint64_t n = static_cast<uint64_t>(x.tokens) * x.heads * (x.head_dim / 2);
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, n, wg);
  struct {
    uint32_t tokens, heads, head_dim, x_stride, x_offset, y_stride, y_offset, pos_rows, n_pos;
  } push{static_cast<uint32_t>(x.tokens),      static_cast<uint32_t>(x.heads),
         static_cast<uint32_t>(x.head_dim),    static_cast<uint32_t>(x.row_stride),
         static_cast<uint32_t>(x.col_offset),  static_cast<uint32_t>(y.row_stride),
         static_cast<uint32_t>(y.col_offset),  static_cast<uint32_t>(positions.shape[0]),
         static_cast<uint32_t>(table.shape[0])};
  s.dispatch(ctx.pipeline(shaders::rope_2d, {wg}), {positions, table, x.data, y.data}, push, g.x, g.y);
}

}  // namespace vkspec::ops
