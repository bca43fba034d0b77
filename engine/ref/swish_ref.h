#pragma once
// CPU reference for ops::swish: x * sigmoid(x) in double.
#include <cstddef>
#include <vector>

namespace vkspec::ref {

std::vector<float> swish(const std::vector<float>& x);

}  // namespace vkspec::ref
