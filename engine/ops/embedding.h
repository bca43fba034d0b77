#pragma once
// Token / class embedding lookup: gathers rows of a [V, D] table into f32 activations.
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// table: f32 or f16 [V, D]; ids: i32 or u32 [T] (any shape with T elements); out: f32 [R T, D],
// row r from ids[r % T] (R > 1: the batch rows of a CFG pair reading the same tokens, one dispatch).
// Contract: the caller validates ids (0 <= id < V). The shader still clamps every id into
// [0, V - 1], so a bad id yields a wrong row, never an out-of-bounds read. Tables larger than
// maxStorageBufferRange are bound in row chunks (one dispatch each).
void embedding(CommandStream& s, const TensorView& table, const TensorView& ids, const TensorView& out);

}  // namespace vkspec::ops
