#include "engine/ref/matmul_ref.h"

#include <cblas.h>

namespace vkspec::ref {

void matmul_blas(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(k), w, static_cast<blasint>(k), 0.0f, y,
              static_cast<blasint>(n));
}

int blas_threads() { return openblas_get_num_threads(); }

std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t n, int64_t k) {
  std::vector<float> y(static_cast<size_t>(m * n));
  if (m * n * k > (int64_t{1} << 24)) {
    matmul_blas(x.data(), w.data(), y.data(), m, n, k);
    return y;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      const float* xr = &x[static_cast<size_t>(i * k)];
      const float* wr = &w[static_cast<size_t>(j * k)];
      for (int64_t e = 0; e < k; ++e) s += static_cast<double>(xr[e]) * wr[e];
      y[static_cast<size_t>(i * n + j)] = static_cast<float>(s);
    }
  return y;
}

}  // namespace vkspec::ref
