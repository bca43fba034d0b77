#pragma once
// CPU reference for ops::group_norm (x [N, H, W, C] channel-last); two-pass statistics in double.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// x's shape (n images of hw pixels of c channels) and the norm's settings (ops::GroupNormParams').
struct GroupNormArgs {
  int64_t n = 1, hw = 1, c = 1;
  int64_t groups = 32;
  double eps = 1e-6;
  bool swish = false;
};
std::vector<float> group_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                              const std::vector<float>& beta, const GroupNormArgs& a);

}  // namespace vkspec::ref
