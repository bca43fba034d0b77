#include "eval/frechet.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace vkspec {

GaussianStats gaussian_stats(const std::vector<float>& f, int64_t n, int64_t dim) {
  if (n < 2 || dim < 1 || static_cast<int64_t>(f.size()) != n * dim)
    throw Error("feature statistics need at least 2 vectors of the stated size, got " + std::to_string(f.size()) +
                " values for " + std::to_string(n) + " x " + std::to_string(dim));
  GaussianStats s;
  s.dim = dim;
  s.count = n;
  s.mean.assign(static_cast<size_t>(dim), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < dim; ++d) s.mean[static_cast<size_t>(d)] += f[static_cast<size_t>(i * dim + d)];
  for (double& m : s.mean) m /= static_cast<double>(n);
  s.cov.assign(static_cast<size_t>(dim * dim), 0.0);
  std::vector<double> c(static_cast<size_t>(dim));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dim; ++d)
      c[static_cast<size_t>(d)] = f[static_cast<size_t>(i * dim + d)] - s.mean[static_cast<size_t>(d)];
    for (int64_t a = 0; a < dim; ++a) {
      const double ca = c[static_cast<size_t>(a)];
      double* row = s.cov.data() + a * dim;
      for (int64_t b = a; b < dim; ++b) row[b] += ca * c[static_cast<size_t>(b)];
    }
  }
  for (int64_t a = 0; a < dim; ++a)
    for (int64_t b = a; b < dim; ++b) {
      const double v = s.cov[static_cast<size_t>(a * dim + b)] / static_cast<double>(n - 1);
      s.cov[static_cast<size_t>(a * dim + b)] = s.cov[static_cast<size_t>(b * dim + a)] = v;
    }
  return s;
}

void symmetric_eigen(std::vector<double> a, int64_t n, std::vector<double>& values, std::vector<double>& vecs) {
  auto at = [n](std::vector<double>& m, int64_t r, int64_t c) -> double& { return m[static_cast<size_t>(r * n + c)]; };
  vecs.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) at(vecs, i, i) = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (int64_t p = 0; p < n; ++p) {
      diag += at(a, p, p) * at(a, p, p);
      for (int64_t q = p + 1; q < n; ++q) off += at(a, p, q) * at(a, p, q);
    }
    if (off <= 1e-30 * diag || off == 0) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = at(a, p, q);
        if (std::abs(apq) < 1e-300) continue;
        // The rotation that zeroes a[p][q] (Golub & Van Loan, symmetric Schur decomposition).
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - s * akq;
          at(a, k, q) = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - s * aqk;
          at(a, q, k) = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = at(vecs, k, p), vkq = at(vecs, k, q);
          at(vecs, k, p) = c * vkp - s * vkq;
          at(vecs, k, q) = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return at(a, x, x) < at(a, y, y); });
  values.resize(static_cast<size_t>(n));
  std::vector<double> sorted(static_cast<size_t>(n * n));
  for (int64_t j = 0; j < n; ++j) {
    values[static_cast<size_t>(j)] = at(a, order[static_cast<size_t>(j)], order[static_cast<size_t>(j)]);
    for (int64_t k = 0; k < n; ++k) sorted[static_cast<size_t>(k * n + j)] = at(vecs, k, order[static_cast<size_t>(j)]);
  }
  vecs = std::move(sorted);
}

FrechetReference frechet_reference(GaussianStats stats) {
  if (stats.dim < 1) throw Error("Frechet distance: empty statistics");
  const int64_t n = stats.dim;
  std::vector<double> w, v;
  symmetric_eigen(stats.cov, n, w, v);
  // r = S1^1/2 = V diag(sqrt(max(w, 0))) V^T
  std::vector<double> r(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k)
        s += v[static_cast<size_t>(i * n + k)] * std::sqrt(std::max(w[static_cast<size_t>(k)], 0.0)) *
             v[static_cast<size_t>(j * n + k)];
      r[static_cast<size_t>(i * n + j)] = s;
    }
  return {std::move(stats), std::move(r)};
}

double frechet_distance(const GaussianStats& a, const GaussianStats& b) {
  if (a.dim != b.dim || a.dim < 1) throw Error("Frechet distance between statistics of different dimensions");
  return frechet_distance(frechet_reference(a), b);
}

double frechet_distance(const FrechetReference& ref, const GaussianStats& b) {
  const GaussianStats& a = ref.stats;
  if (a.dim != b.dim || a.dim < 1) throw Error("Frechet distance between statistics of different dimensions");
  const int64_t n = a.dim;
  const std::vector<double>& r = ref.sqrt_cov;
  // m = r S2 r (symmetric)
  std::vector<double> t(static_cast<size_t>(n * n), 0.0), m(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const double rik = r[static_cast<size_t>(i * n + k)];
      for (int64_t j = 0; j < n; ++j) t[static_cast<size_t>(i * n + j)] += rik * b.cov[static_cast<size_t>(k * n + j)];
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const double tik = t[static_cast<size_t>(i * n + k)];
      for (int64_t j = 0; j < n; ++j) m[static_cast<size_t>(i * n + j)] += tik * r[static_cast<size_t>(k * n + j)];
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      const double s = 0.5 * (m[static_cast<size_t>(i * n + j)] + m[static_cast<size_t>(j * n + i)]);
      m[static_cast<size_t>(i * n + j)] = m[static_cast<size_t>(j * n + i)] = s;
    }
  std::vector<double> mw, mv;
  symmetric_eigen(m, n, mw, mv);
  double cross = 0, tr = 0, d2 = 0;
  for (double e : mw) cross += std::sqrt(std::max(e, 0.0));
  for (int64_t i = 0; i < n; ++i) {
    tr += a.cov[static_cast<size_t>(i * n + i)] + b.cov[static_cast<size_t>(i * n + i)];
    const double d = a.mean[static_cast<size_t>(i)] - b.mean[static_cast<size_t>(i)];
    d2 += d * d;
  }
  // Rounding can take identical statistics a hair below zero.
  return std::max(0.0, d2 + tr - 2 * cross);
}

}  // namespace vkspec
