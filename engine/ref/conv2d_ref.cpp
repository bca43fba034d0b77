#include "engine/ref/conv2d_ref.h"

namespace vkspec::ref {

std::vector<float> conv2d(const Conv2dShape& s, const std::vector<float>& x, const std::vector<float>& weight,
                          const std::vector<float>& bias, const std::vector<float>& residual) {
  const int64_t ho = s.out_h(), wo = s.out_w();
  std::vector<float> y(static_cast<size_t>(s.n * ho * wo * s.co));
  std::vector<double> acc(static_cast<size_t>(s.co));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        for (int64_t co = 0; co < s.co; ++co) acc[static_cast<size_t>(co)] = bias[static_cast<size_t>(co)];
        for (int64_t ky = 0; ky < s.kh; ++ky) {
          const int64_t iy = oy * s.stride + ky - s.pad_top;
          if (iy < 0 || iy >= s.h) continue;
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t ix = ox * s.stride + kx - s.pad_left;
            if (ix < 0 || ix >= s.w) continue;
            const float* xp = &x[static_cast<size_t>(((n * s.h + iy) * s.w + ix) * s.ci)];
            for (int64_t co = 0; co < s.co; ++co) {
              const float* wp = &weight[static_cast<size_t>(((co * s.ci) * s.kh + ky) * s.kw + kx)];
              double a = 0;
              for (int64_t ci = 0; ci < s.ci; ++ci) a += double(xp[ci]) * double(wp[ci * s.kh * s.kw]);
              acc[static_cast<size_t>(co)] += a;
            }
          }
        }
        const size_t o = static_cast<size_t>(((n * ho + oy) * wo + ox) * s.co);
        for (int64_t co = 0; co < s.co; ++co) {
          double v = acc[static_cast<size_t>(co)];
          if (!residual.empty()) v += residual[o + static_cast<size_t>(co)];
          y[o + static_cast<size_t>(co)] = static_cast<float>(v);
        }
      }
  return y;
}

}  // namespace vkspec::ref
