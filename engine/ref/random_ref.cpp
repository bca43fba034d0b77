#include "engine/ref/random_ref.h"

#include "engine/ops/det_math.h"

namespace vkspec::ref {

std::vector<uint32_t> philox_fill(const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose,
                                  uint32_t first_draw, uint32_t draws, ops::RandomKind kind) {
  std::vector<uint32_t> out(positions.size() * draws);
  for (size_t r = 0; r < positions.size(); ++r) {
    for (uint32_t j = 0; j < draws; ++j) {
      const uint32_t x = philox::bits(seed, positions[r], purpose, first_draw + j);
      uint32_t v = x;
      if (kind == ops::RandomKind::Uniform) v = det::float_bits(philox::to_uniform(x));
      if (kind == ops::RandomKind::Gumbel) v = det::float_bits(philox::to_gumbel(x));
      out[r * draws + j] = v;
    }
  }
  return out;
}

}  // namespace vkspec::ref
