#include "eval/fid_infinity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "eval/feature_dots.h"
#include "eval/seeded_rng.h"

namespace vkspec {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw Error("line fit: needs at least two points");
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) throw Error("line fit: all points at the same x");
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  return f;
}

int64_t fid_infinity_min_images(int64_t dim) { return std::max<int64_t>(50, 5 * dim); }

std::optional<double> fid_infinity(const std::vector<float>& features, int64_t n, int64_t dim,
                                   const FrechetReference& reference, int points) {
  if (n < fid_infinity_min_images(dim) || points < 2) return std::nullopt;
  if (static_cast<int64_t>(features.size()) != n * dim)
    throw Error("FID-infinity: " + std::to_string(features.size()) + " feature values for " + std::to_string(n) +
                " x " + std::to_string(dim));
  SeededRng rng(0x46494430494e46ull);  // "FID0INF"
  std::vector<double> inv_n, fid;
  int64_t last = 0;
  for (int p = 0; p < points; ++p) {
    // Sizes n/5 .. n, evenly spaced (as Chong & Forsyth's 5000 .. 50000).
    const double lo = static_cast<double>(n) / 5.0;
    const int64_t size = static_cast<int64_t>(std::llround(lo + (static_cast<double>(n) - lo) * p / (points - 1)));
    if (size == last || size < 2) continue;
    last = size;
    const std::vector<float> sub = size == n ? features : feature_rows(features, dim, rng.subset(n, size));
    inv_n.push_back(1.0 / static_cast<double>(size));
    fid.push_back(frechet_distance(reference, gaussian_stats(sub, size, dim)));
  }
  if (inv_n.size() < 2) return std::nullopt;
  return fit_line(inv_n, fid).intercept;
}

}  // namespace vkspec
