#pragma once
// CPU reference for ops::spatial_attention: q, k, v [N, HW, C]; exact softmax in double.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> spatial_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t n, int64_t hw, int64_t c, double scale);

}  // namespace vkspec::ref
