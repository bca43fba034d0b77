#include "engine/ref/gelu_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> gelu_tanh(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  const double c = std::sqrt(2.0 / M_PI);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))));
  }
  return y;
}

}  // namespace vkspec::ref
