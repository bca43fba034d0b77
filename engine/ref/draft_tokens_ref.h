#pragma once
// CPU references of engine/ops/draft_tokens.h. q and out are [N, V] row-major.
#include <cstdint>
#include <vector>

namespace vkspec::ref {

struct TopTokens {
  std::vector<uint32_t> tokens;  // [N, k]
  std::vector<float> values;     // [N, k]
};
TopTokens top_tokens(const std::vector<float>& q, uint32_t vocab, uint32_t k);

std::vector<float> point_masses(const std::vector<uint32_t>& tokens, uint32_t vocab);

}  // namespace vkspec::ref
