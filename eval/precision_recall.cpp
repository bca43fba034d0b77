#include "eval/precision_recall.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "eval/feature_dots.h"

namespace vkspec {
namespace {

std::vector<double> squared_norms(const std::vector<float>& f, int64_t n, int64_t dim) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t d = 0; d < dim; ++d) {
      const double v = f[static_cast<size_t>(i * dim + d)];
      s += v * v;
    }
    out[static_cast<size_t>(i)] = s;
  }
  return out;
}

// Calls visit(i, j, squared distance) for every pair of a's and b's vectors (|a|^2 + |b|^2 - 2 a.b
// from blocked dot products, at least 0).
template <typename Visit>
void for_each_distance(const std::vector<float>& a, int64_t n, const std::vector<double>& na,
                       const std::vector<float>& b, int64_t m, const std::vector<double>& nb, int64_t dim,
                       Visit visit) {
  for_each_dot_block(a.data(), n, b.data(), m, dim, [&](int64_t first, int64_t rows, const float* dots) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) {
        const int64_t i = first + r;
        const double d2 = na[static_cast<size_t>(i)] + nb[static_cast<size_t>(j)] - 2.0 * dots[r * m + j];
        visit(i, j, std::max(d2, 0.0));
      }
  });
}

// Squared distance of each vector to its k-th nearest neighbour among the others of its set.
std::vector<double> kth_neighbour_radii(const std::vector<float>& f, int64_t n, const std::vector<double>& norms,
                                        int64_t dim, int k) {
  std::vector<double> radii(static_cast<size_t>(n));
  std::vector<double> row(static_cast<size_t>(n));
  int64_t current = -1;
  auto finish = [&](int64_t i) {
    // The row holds n - 1 distances (itself left out); the k-th smallest is at index k - 1.
    std::nth_element(row.begin(), row.begin() + (k - 1), row.begin() + (n - 1));
    radii[static_cast<size_t>(i)] = row[static_cast<size_t>(k - 1)];
  };
  int64_t filled = 0;
  for_each_distance(f, n, norms, f, n, norms, dim, [&](int64_t i, int64_t j, double d2) {
    if (i != current) {
      if (current >= 0) finish(current);
      current = i;
      filled = 0;
    }
    if (i != j) row[static_cast<size_t>(filled++)] = d2;
  });
  finish(current);
  return radii;
}

}  // namespace

PrecisionRecall precision_recall(const std::vector<float>& real, int64_t n, const std::vector<float>& generated,
                                 int64_t m, int64_t dim, int k) {
  if (k < 1 || n <= k || m <= k || static_cast<int64_t>(real.size()) != n * dim ||
      static_cast<int64_t>(generated.size()) != m * dim)
    throw Error("precision and recall need more than k = " + std::to_string(k) + " vectors of " + std::to_string(dim) +
                " values in each set, got " + std::to_string(n) + " real and " + std::to_string(m) + " generated");
  const std::vector<double> nr = squared_norms(real, n, dim), ng = squared_norms(generated, m, dim);
  const std::vector<double> rr = kth_neighbour_radii(real, n, nr, dim, k);
  const std::vector<double> rg = kth_neighbour_radii(generated, m, ng, dim, k);
  std::vector<char> generated_in_real(static_cast<size_t>(m), 0), real_in_generated(static_cast<size_t>(n), 0);
  for_each_distance(real, n, nr, generated, m, ng, dim, [&](int64_t i, int64_t j, double d2) {
    if (d2 <= rr[static_cast<size_t>(i)]) generated_in_real[static_cast<size_t>(j)] = 1;
    if (d2 <= rg[static_cast<size_t>(j)]) real_in_generated[static_cast<size_t>(i)] = 1;
  });
  PrecisionRecall pr;
  for (char c : generated_in_real) pr.precision += c;
  for (char c : real_in_generated) pr.recall += c;
  pr.precision /= static_cast<double>(m);
  pr.recall /= static_cast<double>(n);
  return pr;
}

}  // namespace vkspec
