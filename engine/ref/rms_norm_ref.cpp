#include "engine/ref/rms_norm_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> rms_norm(const std::vector<float>& x, const std::vector<float>& weight, float eps) {
  const size_t dim = weight.size();
  std::vector<float> y(x.size());
  for (size_t base = 0; base + dim <= x.size(); base += dim) {
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += static_cast<double>(x[base + i]) * x[base + i];
    const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + eps));
    for (size_t i = 0; i < dim; ++i) y[base + i] = (x[base + i] * r) * weight[i];
  }
  return y;
}

}  // namespace vkspec::ref
