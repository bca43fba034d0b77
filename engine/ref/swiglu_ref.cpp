#include "engine/ref/swiglu_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> swiglu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = (a[i] / (1.0f + std::exp(-a[i]))) * b[i];
  return y;
}

}  // namespace vkspec::ref
