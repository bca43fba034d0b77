#pragma once
// CPU reference for head_layer_norm (tests and --check modes only).
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// x: [tokens, row_stride] with heads * head_dim columns from col_offset normalised per head;
// weight, bias: [groups, head_dim]. Returns the whole matrix (other columns unchanged).
std::vector<float> head_layer_norm(std::vector<float> x, int64_t row_stride, int64_t col_offset, int64_t heads,
                                   int64_t head_dim, const std::vector<float>& weight, const std::vector<float>& bias,
                                   float eps);

}  // namespace vkspec::ref
