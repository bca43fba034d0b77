#include "engine/ref/swish_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> swish(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(x[i]))));
  return y;
}

}  // namespace vkspec::ref
