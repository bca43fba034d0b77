#include "engine/ops/row_window.h"

#include <algorithm>

#include "engine/ops/det_math.h"
#include "engine/ops/dispatch_util.h"

namespace vkspec::ops {

Window window(const Context& ctx, const TensorView& v, uint64_t first, uint64_t count) {
  const uint64_t align = std::max<uint64_t>(ctx.caps().min_storage_buffer_offset_alignment, 4);
  const uint64_t begin = v.offset + first * 4, end = begin + count * 4;
  Window w;
  w.view = v;
  w.view.offset = begin - begin % align;
  w.view.bytes = end - w.view.offset;
  w.view.shape = Shape{static_cast<int64_t>(w.view.bytes / 4)};
  w.offset = static_cast<uint32_t>((begin - w.view.offset) / 4);
  return w;
}

uint32_t rows_per_dispatch(const Context& ctx, uint64_t row_bytes, uint64_t rows, const char* op) {
  const uint64_t align = std::max<uint64_t>(ctx.caps().min_storage_buffer_offset_alignment, 4);
  const uint64_t limit = ctx.caps().max_storage_buffer_range;
  require(row_bytes + align <= limit, op,
          [&] { return "one row of " + std::to_string(row_bytes) + " bytes exceeds maxStorageBufferRange"; });
  const uint64_t n = (limit - align) / std::max<uint64_t>(row_bytes, 1);
  return static_cast<uint32_t>(std::min<uint64_t>({n, rows, 0xFFFFFFFFull}));
}

Window rows_window(const Context& ctx, const TensorView& v, uint32_t r0, uint32_t n, uint64_t width) {
  return window(ctx, v, r0 * width, n * width);
}

void for_each_row_batch(const Context& ctx, uint64_t row_bytes, uint32_t rows, const char* op,
                        const std::function<void(uint32_t r0, uint32_t n)>& each) {
  const uint32_t batch = rows_per_dispatch(ctx, row_bytes, rows, op);
  for (uint32_t r0 = 0; r0 < rows; r0 += batch) each(r0, std::min(batch, rows - r0));
}

uint32_t chunk_workgroup_size(const Context& ctx, uint32_t vocab) {
  uint32_t wg = std::max(ctx.caps().subgroup_size, 1u);
  // lavapipe runs a workgroup's subgroups as coroutines on one thread and switches through all of
  // them at every barrier: one subgroup walking all the chunks is the same arithmetic (the chunk
  // trees fix the order whatever the size) without the switches.
  if (ctx.caps().cpu_driver) return wg;
  // Powers of two keep the number of pipeline variants (one per size) small.
  while (wg < det::chunk_count(vocab)) wg *= 2;
  return std::min(ctx.default_workgroup_size(), wg);
}

}  // namespace vkspec::ops
