#pragma once
// CPU reference for ops::pixel_shuffle: x [N, H, W, C r^2] -> [N, r H, r W, C].
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> pixel_shuffle(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t r);

}  // namespace vkspec::ref
