#include "engine/ref/elementwise_ref.h"

namespace vkspec::ref {

std::vector<float> add(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

}  // namespace vkspec::ref
