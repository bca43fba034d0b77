#include "engine/ref/swiglu_ref.h"

#include "engine/ref/gelu_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> swiglu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = (a[i] / (1.0f + std::exp(-a[i]))) * b[i];
  return y;
}

std::vector<float> geglu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y = gelu_tanh(a);
  for (size_t i = 0; i < y.size(); ++i) y[i] *= b[i];
  return y;
}

}  // namespace vkspec::ref
