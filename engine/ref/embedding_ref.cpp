#include "engine/ref/embedding_ref.h"

#include <algorithm>

namespace vkspec::ref {

std::vector<float> embedding(const std::vector<float>& table, int64_t vocab, int64_t dim,
                             const std::vector<int64_t>& ids) {
  std::vector<float> out;
  out.reserve(ids.size() * static_cast<size_t>(dim));
  for (int64_t id : ids) {
    const int64_t row = std::clamp<int64_t>(id, 0, vocab - 1);
    out.insert(out.end(), table.begin() + row * dim, table.begin() + (row + 1) * dim);
  }
  return out;
}

}  // namespace vkspec::ref
