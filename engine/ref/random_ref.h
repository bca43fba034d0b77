#pragma once
// CPU reference of ops::philox_fill (engine/ops/philox.h is the definition).
#include <cstdint>
#include <vector>

#include "engine/ops/random.h"

namespace vkspec::ref {

// [positions.size(), draws] values as raw 32-bit words (floats by their bits).
std::vector<uint32_t> philox_fill(const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose,
                                  uint32_t first_draw, uint32_t draws, ops::RandomKind kind);

}  // namespace vkspec::ref
