#include "eval/feature_dots.h"

#include <algorithm>
#include <cblas.h>

namespace vkspec {

void for_each_dot_block(const float* x, int64_t n, const float* y, int64_t m, int64_t dim,
                        const std::function<void(int64_t, int64_t, const float*)>& visit) {
  if (n <= 0 || m <= 0) return;
  // About 32 MiB of dots per block.
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(n, (int64_t{8} << 20) / m));
  std::vector<float> dots(static_cast<size_t>(block * m));
  for (int64_t first = 0; first < n; first += block) {
    const int64_t rows = std::min(block, n - first);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(rows), static_cast<blasint>(m),
                static_cast<blasint>(dim), 1.0f, x + first * dim, static_cast<blasint>(dim), y,
                static_cast<blasint>(dim), 0.0f, dots.data(), static_cast<blasint>(m));
    visit(first, rows, dots.data());
  }
}

std::vector<float> feature_rows(const std::vector<float>& features, int64_t dim, const std::vector<int64_t>& rows) {
  std::vector<float> out;
  out.reserve(rows.size() * static_cast<size_t>(dim));
  for (int64_t r : rows) out.insert(out.end(), features.begin() + r * dim, features.begin() + (r + 1) * dim);
  return out;
}

}  // namespace vkspec
