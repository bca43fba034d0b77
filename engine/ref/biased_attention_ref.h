#pragma once
// CPU reference for ops::biased_attention, in double: q, k, v as [tokens, heads * head_dim]
// (packed), bias [heads, tokens, tokens]; returns out [tokens, heads * head_dim].
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<float> biased_attention(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, const std::vector<float>& bias, int64_t tokens,
                                    int64_t heads, int64_t head_dim, float scale);

}  // namespace vkspec::ref
