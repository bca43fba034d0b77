#pragma once
// CPU reference for ops::group_norm (x [N, H, W, C] channel-last); two-pass statistics in double.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> group_norm(const std::vector<float>& x, int64_t n, int64_t hw, int64_t c,
                              const std::vector<float>& gamma, const std::vector<float>& beta, int64_t groups,
                              double eps, bool swish);

}  // namespace vkspec::ref
