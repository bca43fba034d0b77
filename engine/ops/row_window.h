#pragma once
// Binding windows for row-wise ops over many rows: a dispatch covers a batch of rows whose
// bindings each stay within maxStorageBufferRange, and every binding starts at an offset the
// device accepts (minStorageBufferOffsetAlignment) with the remainder passed as an element offset.
#include <cstdint>
#include <functional>

#include "engine/vk/context.h"
#include "engine/vk/tensor.h"

namespace vkspec::ops {

struct Window {
  TensorView view;      // aligned range covering the requested elements
  uint32_t offset = 0;  // index of the first requested element within view
};

// Elements [first, first + count) of a view of 4-byte elements.
Window window(const Context& ctx, const TensorView& v, uint64_t first, uint64_t count);

// Rows per dispatch when the widest binding needs row_bytes per row (at least 1; throws naming
// op when a single row is over the limit).
uint32_t rows_per_dispatch(const Context& ctx, uint64_t row_bytes, uint64_t rows, const char* op);

// Rows [r0, r0 + n) of a view of rows of `width` 4-byte elements.
Window rows_window(const Context& ctx, const TensorView& v, uint32_t r0, uint32_t n, uint64_t width);

// Calls each(r0, n) for consecutive batches [r0, r0 + n) covering rows [0, rows), each as many
// rows as rows_per_dispatch allows for row_bytes: one dispatch per batch.
void for_each_row_batch(const Context& ctx, uint64_t row_bytes, uint32_t rows, const char* op,
                        const std::function<void(uint32_t r0, uint32_t n)>& each);

// Workgroup size for kernels with one workgroup per row and one invocation per chunk of the row's
// chunk tree (det_math.h): small vocabularies get small workgroups, CPU drivers one subgroup.
uint32_t chunk_workgroup_size(const Context& ctx, uint32_t vocab);

}  // namespace vkspec::ops
