#include "engine/ref/rope_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {

std::vector<float> rope_2d(const std::vector<float>& x, int64_t tokens, int64_t heads, int64_t head_dim,
                           const std::vector<int32_t>& positions, const std::vector<float>& table) {
  const int64_t quarter = head_dim / 4, pos_rows = static_cast<int64_t>(positions.size() / 3);
  const int64_t n_pos = static_cast<int64_t>(table.size()) / (2 * quarter);
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < tokens; ++n) {
    const int32_t* pos = &positions[static_cast<size_t>((n % pos_rows) * 3)];
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < head_dim / 2; ++i) {
        float c = 0, s = 0;
        if (pos[2] == 0) {
          const int64_t coord = std::min<int64_t>(i < quarter ? pos[0] : pos[1], n_pos - 1);
          const size_t t = static_cast<size_t>((coord * quarter + (i < quarter ? i : i - quarter)) * 2);
          c = table[t];
          s = table[t + 1];
        }
        const size_t e = static_cast<size_t>((n * heads + h) * head_dim + 2 * i);
        y[e] = x[e] * c - x[e + 1] * s;
        y[e + 1] = x[e + 1] * c + x[e] * s;
      }
  }
  return y;
}

double rope_2d_angle(int64_t head_dim, int64_t coord, int64_t j, double base) {
  return static_cast<double>(coord) / std::pow(base, 2.0 * static_cast<double>(j) / (head_dim / 2.0));
}

}  // namespace vkspec::ref
