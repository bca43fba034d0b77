#pragma once
// CPU reference for elementwise ops (tests and --check modes only, never the product path).
#include <cstddef>
#include <vector>

namespace vkspec::ref {

std::vector<float> add(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace vkspec::ref
