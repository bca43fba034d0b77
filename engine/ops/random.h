#pragma once
// Philox draws on the GPU: the same numbers philox.h gives on the host (noise tensors for
// strategies that want them materialised, and the CPU/GPU bit-identity check of the RNG).
#include <cstdint>

#include "engine/ops/philox.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

enum class RandomKind : uint32_t {
  Bits = 0,     // philox::bits, u32
  Uniform = 1,  // philox::uniform, f32 in [0, 1)
  Gumbel = 2,   // philox::gumbel, f32
};

// out[r][i] = draw `first_draw + i` of (seed, positions[r], purpose). positions: u32/i32 [R];
// out: [R, N], u32 for Bits, f32 otherwise.
void philox_fill(CommandStream& s, const TensorView& positions, uint64_t seed, uint32_t purpose, uint32_t first_draw,
                 RandomKind kind, const TensorView& out);

}  // namespace vkspec::ops
