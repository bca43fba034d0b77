#pragma once
// CPU reference for swiglu (tests and --check modes only).
#include <vector>

namespace vkspec::ref {

// y = silu(a) * b elementwise, silu(x) = x / (1 + exp(-x)) in f32 like torch.
std::vector<float> swiglu(const std::vector<float>& a, const std::vector<float>& b);
// y = gelu_tanh(a) * b elementwise (ref::gelu_tanh's function, in double).
std::vector<float> geglu(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace vkspec::ref
