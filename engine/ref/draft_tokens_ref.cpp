#include "engine/ref/draft_tokens_ref.h"

#include <algorithm>
#include <numeric>

namespace vkspec::ref {

TopTokens top_tokens(const std::vector<float>& q, uint32_t vocab, uint32_t k) {
  const size_t rows = q.size() / vocab;
  TopTokens out{std::vector<uint32_t>(rows * k, 0xFFFFFFFFu), std::vector<float>(rows * k, 0.0f)};
  std::vector<uint32_t> ids(vocab);
  for (size_t j = 0; j < rows; ++j) {
    const float* row = q.data() + j * vocab;
    std::iota(ids.begin(), ids.end(), 0u);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](uint32_t a, uint32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
    for (uint32_t r = 0; r < k && row[ids[r]] > 0.0f; ++r) {
      out.tokens[j * k + r] = ids[r];
      out.values[j * k + r] = row[ids[r]];
    }
  }
  return out;
}

std::vector<float> point_masses(const std::vector<uint32_t>& tokens, uint32_t vocab) {
  std::vector<float> out(tokens.size() * vocab, 0.0f);
  for (size_t j = 0; j < tokens.size(); ++j)
    if (tokens[j] < vocab) out[j * vocab + tokens[j]] = 1.0f;
  return out;
}

}  // namespace vkspec::ref
