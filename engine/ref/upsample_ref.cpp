#include "engine/ref/upsample_ref.h"

namespace vkspec::ref {

std::vector<float> upsample_nearest_2x(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c) {
  std::vector<float> y(static_cast<size_t>(n * 4 * h * w * c));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < 2 * h; ++i)
      for (int64_t j = 0; j < 2 * w; ++j)
        for (int64_t k = 0; k < c; ++k)
          y[static_cast<size_t>(((b * 2 * h + i) * 2 * w + j) * c + k)] =
              x[static_cast<size_t>(((b * h + i / 2) * w + j / 2) * c + k)];
  return y;
}

}  // namespace vkspec::ref
