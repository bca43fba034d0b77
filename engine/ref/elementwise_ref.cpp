#include "engine/ref/elementwise_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {

std::vector<float> add(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

std::vector<float> bias_act(const std::vector<float>& x, const std::vector<float>& bias, int act,
                            const std::vector<float>& residual) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x[i] + (bias.empty() ? 0.0f : bias[i % bias.size()]);
    if (act == 1) v = std::max(v, 0.0f);
    if (act == 2) v = static_cast<float>(v / (1.0 + std::exp(-static_cast<double>(v))));
    if (act == 3) v = static_cast<float>(0.5 * v * (1.0 + std::erf(static_cast<double>(v) / std::sqrt(2.0))));
    y[i] = residual.empty() ? v : residual[i] + v;
  }
  return y;
}

namespace {

template <class Combine>
std::vector<float> pool_2x2(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c, Combine combine) {
  const int64_t ho = h / 2, wo = w / 2;
  std::vector<float> y(static_cast<size_t>(n * ho * wo * c));
  auto at = [&](int64_t i, int64_t yy, int64_t xx, int64_t ch) {
    return x[static_cast<size_t>(((i * h + yy) * w + xx) * c + ch)];
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox)
        for (int64_t ch = 0; ch < c; ++ch)
          y[static_cast<size_t>(((i * ho + oy) * wo + ox) * c + ch)] =
              combine(at(i, 2 * oy, 2 * ox, ch), at(i, 2 * oy, 2 * ox + 1, ch), at(i, 2 * oy + 1, 2 * ox, ch),
                      at(i, 2 * oy + 1, 2 * ox + 1, ch));
  return y;
}

}  // namespace

std::vector<float> max_pool_2x2(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c) {
  return pool_2x2(x, n, h, w, c,
                  [](float a, float b, float cc, float d) { return std::max(std::max(a, b), std::max(cc, d)); });
}

std::vector<float> avg_pool_2x2(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c) {
  return pool_2x2(x, n, h, w, c, [](float a, float b, float cc, float d) { return (((a + b) + cc) + d) * 0.25f; });
}

}  // namespace vkspec::ref
