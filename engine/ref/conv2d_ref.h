#pragma once
// CPU reference for ops::conv2d (same layouts: x [N, H, W, Ci], weight [Co, Ci, kh, kw],
// y [N, Ho, Wo, Co]); double accumulation.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

struct Conv2dShape {
  int64_t n = 1, h = 1, w = 1, ci = 1, co = 1, kh = 3, kw = 3;
  int64_t stride = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h() const { return (h + pad_top + pad_bottom - kh) / stride + 1; }
  int64_t out_w() const { return (w + pad_left + pad_right - kw) / stride + 1; }
};

// residual: empty, or [N, Ho, Wo, Co] added to the result.
std::vector<float> conv2d(const Conv2dShape& s, const std::vector<float>& x, const std::vector<float>& weight,
                          const std::vector<float>& bias, const std::vector<float>& residual = {});

}  // namespace vkspec::ref
