#pragma once
// CPU reference for rms_norm (tests and --check modes only).
#include <vector>

namespace vkspec::ref {

// x: [rows, dim] row-major; weight: [dim]. Mean square accumulated in double.
std::vector<float> rms_norm(const std::vector<float>& x, const std::vector<float>& weight, float eps);

}  // namespace vkspec::ref
