#include "engine/ref/spatial_attention_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {

std::vector<float> spatial_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t n, int64_t hw, int64_t c, double scale) {
  std::vector<float> out(q.size());
  std::vector<double> s(static_cast<size_t>(hw)), acc(static_cast<size_t>(c));
  for (int64_t b = 0; b < n; ++b) {
    const size_t img = static_cast<size_t>(b * hw * c);
    for (int64_t i = 0; i < hw; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < hw; ++j) {
        double d = 0;
        for (int64_t ch = 0; ch < c; ++ch)
          d += double(q[img + static_cast<size_t>(i * c + ch)]) * k[img + static_cast<size_t>(j * c + ch)];
        s[static_cast<size_t>(j)] = d * scale;
        mx = std::max(mx, d * scale);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < hw; ++j)
        for (int64_t ch = 0; ch < c; ++ch)
          acc[static_cast<size_t>(ch)] += s[static_cast<size_t>(j)] * v[img + static_cast<size_t>(j * c + ch)];
      for (int64_t ch = 0; ch < c; ++ch)
        out[img + static_cast<size_t>(i * c + ch)] = static_cast<float>(acc[static_cast<size_t>(ch)] / sum);
    }
  }
  return out;
}

}  // namespace vkspec::ref
