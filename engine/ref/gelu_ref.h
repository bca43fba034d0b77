#pragma once
// CPU reference for ops::gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in double.
#include <vector>

namespace vkspec::ref {

std::vector<float> gelu_tanh(const std::vector<float>& x);

}  // namespace vkspec::ref
