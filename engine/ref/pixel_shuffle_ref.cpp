#include "engine/ref/pixel_shuffle_ref.h"

namespace vkspec::ref {

std::vector<float> pixel_shuffle(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t r) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < r * h; ++i)
      for (int64_t j = 0; j < r * w; ++j)
        for (int64_t k = 0; k < c; ++k)
          y[static_cast<size_t>(((b * r * h + i) * r * w + j) * c + k)] =
              x[static_cast<size_t>(((b * h + i / r) * w + j / r) * c * r * r + k * r * r + (i % r) * r + j % r)];
  return y;
}

}  // namespace vkspec::ref
