#include "engine/ref/biased_attention_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {

std::vector<float> biased_attention(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, const std::vector<float>& bias, int64_t T, int64_t H,
                                    int64_t D, float scale) {
  std::vector<float> out(static_cast<size_t>(T * H * D));
  std::vector<double> s(static_cast<size_t>(T));
  const auto at = [&](int64_t t, int64_t h, int64_t d) { return static_cast<size_t>((t * H + h) * D + d); };
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) {
      double m = -1e300, sum = 0;
      for (int64_t j = 0; j < T; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(q[at(t, h, d)]) * k[at(j, h, d)];
        s[static_cast<size_t>(j)] = dot * scale + bias[static_cast<size_t>((h * T + t) * T + j)];
        m = std::max(m, s[static_cast<size_t>(j)]);
      }
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < T; ++j) acc += s[static_cast<size_t>(j)] * v[at(j, h, d)];
        out[at(t, h, d)] = static_cast<float>(acc / sum);
      }
    }
  return out;
}

}  // namespace vkspec::ref
