#include "engine/ref/group_norm_ref.h"

#include <cmath>

namespace vkspec::ref {

namespace {
double swish1(double v) { return v / (1.0 + std::exp(-v)); }
}  // namespace

std::vector<float> group_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                              const std::vector<float>& beta, const GroupNormArgs& a) {
  const int64_t n = a.n, hw = a.hw, c = a.c, groups = a.groups;
  const double eps = a.eps;
  const bool swish = a.swish;
  std::vector<float> y(x.size());
  const int64_t cpg = c / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      auto at = [&](int64_t px, int64_t ch) { return static_cast<size_t>((b * hw + px) * c + g * cpg + ch); };
      double sum = 0;
      for (int64_t px = 0; px < hw; ++px)
        for (int64_t ch = 0; ch < cpg; ++ch) sum += x[at(px, ch)];
      const double count = static_cast<double>(hw * cpg), mean = sum / count;
      double sq = 0;
      for (int64_t px = 0; px < hw; ++px)
        for (int64_t ch = 0; ch < cpg; ++ch) sq += (x[at(px, ch)] - mean) * (x[at(px, ch)] - mean);
      const double rstd = 1.0 / std::sqrt(sq / count + eps);
      for (int64_t px = 0; px < hw; ++px)
        for (int64_t ch = 0; ch < cpg; ++ch) {
          const size_t i = at(px, ch);
          double v =
              (x[i] - mean) * rstd * gamma[static_cast<size_t>(g * cpg + ch)] + beta[static_cast<size_t>(g * cpg + ch)];
          y[i] = static_cast<float>(swish ? swish1(v) : v);
        }
    }
  return y;
}

}  // namespace vkspec::ref
