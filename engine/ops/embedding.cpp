#include "engine/ops/embedding.h"

#include <numeric>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void embedding(CommandStream& s, const TensorView& table, const TensorView& ids, const TensorView& out) {
  const char* op = "embedding";
  require(table.dtype == DType::F32 || table.dtype == DType::F16, op, "table must be f32 or f16");
  require(ids.dtype == DType::I32 || ids.dtype == DType::U32, op, "ids must be i32 or u32");
  require(out.dtype == DType::F32, op, "out must be f32");
  require(table.shape.rank == 2 && table.shape[0] > 0, op,
          [&] { return "table must be [V, D], got " + table.shape.str(); });
  const int64_t vocab = table.shape[0], dim = table.shape[1], n_ids = ids.numel();
  const int64_t tokens = dim > 0 ? out.numel() / dim : 0;  // output rows: n_ids times a repeat count
  require(out.shape.rank >= 1 && out.shape[out.shape.rank - 1] == dim && tokens * dim == out.numel() &&
              (n_ids == 0 ? tokens == 0 : tokens % n_ids == 0 && tokens > 0),
          op, [&] {
            return "out " + out.shape.str() + " must be [R x " + std::to_string(n_ids) + ", " + std::to_string(dim) +
                   "] for " + std::to_string(n_ids) + " ids and table " + table.shape.str();
          });
  require(vocab < (int64_t{1} << 31), op, [&] { return "table has too many rows: " + table.shape.str(); });
  if (tokens == 0 || dim == 0) return;
  require(static_cast<uint64_t>(tokens) * dim <= 0xffffffffu, op,
          [&] { return "too many outputs: " + out.shape.str(); });

  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  const uint64_t row_bytes = static_cast<uint64_t>(dim) * dtype_size(table.dtype);
  // Chunk starts must keep the storage offset alignment (and whole words for packed halves).
  const uint64_t align = std::max<uint64_t>(caps.min_storage_buffer_offset_alignment, 4);
  const uint64_t align_rows = align / std::gcd(row_bytes, align);
  uint64_t chunk_rows = caps.max_storage_buffer_range / row_bytes / align_rows * align_rows;
  require(chunk_rows > 0, op, [&] { return "one table row " + table.shape.str() + " exceeds maxStorageBufferRange"; });
  chunk_rows = std::min<uint64_t>(chunk_rows, static_cast<uint64_t>(vocab));

  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& p =
      ctx.pipeline(shaders::embedding, {wg, table.dtype == DType::F16 ? 1u : 0u, ids.dtype == DType::I32 ? 1u : 0u});
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(tokens) * dim, wg);
  for (uint64_t first = 0; first < static_cast<uint64_t>(vocab); first += chunk_rows) {
    const uint64_t rows = std::min<uint64_t>(chunk_rows, vocab - first);
    struct {
      uint32_t tokens, dim, vocab, chunk_first, chunk_rows, ids;
    } push{static_cast<uint32_t>(tokens), static_cast<uint32_t>(dim),  static_cast<uint32_t>(vocab),
           static_cast<uint32_t>(first),  static_cast<uint32_t>(rows), static_cast<uint32_t>(n_ids)};
    s.dispatch(p, {ids, table.rows(static_cast<int64_t>(first), static_cast<int64_t>(rows)), out}, push, g.x, g.y);
  }
}

}  // namespace vkspec::ops
