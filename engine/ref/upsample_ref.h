#pragma once
// CPU reference for ops::upsample_nearest_2x: x [N, H, W, C] -> [N, 2H, 2W, C].
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> upsample_nearest_2x(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c);

}  // namespace vkspec::ref
