#include "eval/kid.h"

#include <cmath>
#include <limits>
#include <string>

#include "common/error.h"
#include "eval/feature_dots.h"

namespace vkspec {
namespace {

double kernel_of_dot(float dot, int64_t dim) {
  const double u = static_cast<double>(dot) / static_cast<double>(dim) + 1.0;
  return u * u * u;
}

// Row sums of k(a_i, b_j) over j (excluding j == i when a and b are the same set) and over i.
void kernel_sums(const float* a, int64_t n, const float* b, int64_t m, int64_t dim, bool same,
                 std::vector<double>& rows, std::vector<double>* cols) {
  rows.assign(static_cast<size_t>(n), 0.0);
  if (cols) cols->assign(static_cast<size_t>(m), 0.0);
  for_each_dot_block(a, n, b, m, dim, [&](int64_t first, int64_t count, const float* dots) {
    for (int64_t r = 0; r < count; ++r) {
      const float* d = dots + r * m;
      double s = 0;
      for (int64_t j = 0; j < m; ++j) {
        if (same && j == first + r) continue;
        const double k = kernel_of_dot(d[j], dim);
        s += k;
        if (cols) (*cols)[static_cast<size_t>(j)] += k;
      }
      rows[static_cast<size_t>(first + r)] = s;
    }
  });
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// (count - 1) / count * sum of squared deviations from the mean: the jackknife variance.
double jackknife_variance(const std::vector<double>& leave_one_out) {
  const double n = static_cast<double>(leave_one_out.size());
  const double mean = sum(leave_one_out) / n;
  double ss = 0;
  for (double v : leave_one_out) ss += (v - mean) * (v - mean);
  return (n - 1) / n * ss;
}

}  // namespace

double kid_kernel(const float* a, const float* b, int64_t dim) {
  double dot = 0;
  for (int64_t i = 0; i < dim; ++i) dot += static_cast<double>(a[i]) * b[i];
  const double u = dot / static_cast<double>(dim) + 1.0;
  return u * u * u;
}

KidReference kid_reference(std::vector<float> features, int64_t count, int64_t dim) {
  if (count < 2 || dim < 1 || static_cast<int64_t>(features.size()) != count * dim)
    throw Error("KID: the reference needs at least 2 vectors of the stated size, got " +
                std::to_string(features.size()) + " values for " + std::to_string(count) + " x " + std::to_string(dim));
  KidReference r;
  r.count = count;
  r.dim = dim;
  r.features = std::move(features);
  kernel_sums(r.features.data(), count, r.features.data(), count, dim, true, r.row_sums, nullptr);
  r.total = sum(r.row_sums);
  return r;
}

KidEstimate kernel_inception_distance(const std::vector<float>& x, int64_t n, const KidReference& ref) {
  const int64_t dim = ref.dim, m = ref.count;
  if (n < 2 || static_cast<int64_t>(x.size()) != n * dim)
    throw Error("KID needs at least 2 vectors of the reference's size " + std::to_string(dim) + ", got " +
                std::to_string(x.size()) + " values for " + std::to_string(n));
  std::vector<double> rx, cx, cy;  // sum_{j != i} k(x_i, x_j); sum_j k(x_i, y_j); sum_i k(x_i, y_j)
  kernel_sums(x.data(), n, x.data(), n, dim, true, rx, nullptr);
  kernel_sums(x.data(), n, ref.features.data(), m, dim, false, cx, &cy);
  const double sxx = sum(rx), sxy = sum(cx), syy = ref.total;
  const double nd = static_cast<double>(n), md = static_cast<double>(m);
  KidEstimate e;
  e.kid = sxx / (nd * (nd - 1)) + syy / (md * (md - 1)) - 2 * sxy / (nd * md);
  e.se = std::numeric_limits<double>::quiet_NaN();
  if (n < 3 || m < 3) return e;
  // Leaving x_i out changes only the terms that involve it; the rest of each leave-one-out estimate
  // is the same for every i and drops out of the deviations.
  std::vector<double> lx(static_cast<size_t>(n)), ly(static_cast<size_t>(m));
  for (int64_t i = 0; i < n; ++i)
    lx[static_cast<size_t>(i)] = (sxx - 2 * rx[static_cast<size_t>(i)]) / ((nd - 1) * (nd - 2)) -
                                 2 * (sxy - cx[static_cast<size_t>(i)]) / ((nd - 1) * md);
  for (int64_t j = 0; j < m; ++j)
    ly[static_cast<size_t>(j)] = (syy - 2 * ref.row_sums[static_cast<size_t>(j)]) / ((md - 1) * (md - 2)) -
                                 2 * (sxy - cy[static_cast<size_t>(j)]) / (nd * (md - 1));
  e.se = std::sqrt(jackknife_variance(lx) + jackknife_variance(ly));
  return e;
}

}  // namespace vkspec
