#pragma once
// CPU reference for elementwise ops (tests and --check modes only, never the product path).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> add(const std::vector<float>& a, const std::vector<float>& b);
// bias and residual may be empty; channels = bias size (the last dimension); act as
// ops::Activation (0 none, 1 ReLU, 2 SiLU in double, as ref::swish, 3 GELU with std::erf in double).
std::vector<float> bias_act(const std::vector<float>& x, const std::vector<float>& bias, int act,
                            const std::vector<float>& residual = {});
// x [n, h, w, c] channel-last -> [n, h / 2, w / 2, c].
std::vector<float> max_pool_2x2(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c);
std::vector<float> avg_pool_2x2(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c);

}  // namespace vkspec::ref
