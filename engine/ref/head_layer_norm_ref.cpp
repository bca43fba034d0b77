#include "engine/ref/head_layer_norm_ref.h"

#include <cmath>

namespace vkspec::ref {

std::vector<float> head_layer_norm(std::vector<float> x, int64_t row_stride, int64_t col_offset, int64_t heads,
                                   int64_t head_dim, const std::vector<float>& weight, const std::vector<float>& bias,
                                   float eps) {
  const int64_t groups = static_cast<int64_t>(weight.size()) / head_dim, per = heads / groups;
  const int64_t tokens = static_cast<int64_t>(x.size()) / row_stride;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x.data() + t * row_stride + col_offset + h * head_dim;
      const float* g = weight.data() + (h / per) * head_dim;
      const float* b = bias.data() + (h / per) * head_dim;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < head_dim; ++i) mean += v[i];
      mean /= static_cast<double>(head_dim);
      for (int64_t i = 0; i < head_dim; ++i) var += (v[i] - mean) * (v[i] - mean);
      const double r = 1.0 / std::sqrt(var / static_cast<double>(head_dim) + eps);
      for (int64_t i = 0; i < head_dim; ++i) v[i] = static_cast<float>((v[i] - mean) * r) * g[i] + b[i];
    }
  return x;
}

}  // namespace vkspec::ref
