#include "engine/ref/attention_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {

std::vector<float> attention(const AttentionDims& d, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, const std::vector<uint8_t>& visible, int64_t kv_len,
                             float scale) {
  const int64_t B = d.batch, T = d.tokens, S = d.slots, H = d.heads, Dh = d.head_dim;
  const bool per_batch = static_cast<int64_t>(visible.size()) == B * T * S && B > 1;
  std::vector<float> out(static_cast<size_t>(B * T * H * Dh), 0.0f);
  std::vector<double> score(static_cast<size_t>(S)), acc(static_cast<size_t>(Dh));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const uint8_t* vis = &visible[static_cast<size_t>(((per_batch ? b : 0) * T + t) * S)];
      for (int64_t h = 0; h < H; ++h) {
        const float* qr = &q[static_cast<size_t>(((b * T + t) * H + h) * Dh)];
        double mx = -INFINITY;
        for (int64_t s = 0; s < kv_len; ++s) {
          if (!vis[s]) continue;
          const float* kr = &k[static_cast<size_t>(((b * S + s) * H + h) * Dh)];
          double dot = 0;
          for (int64_t e = 0; e < Dh; ++e) dot += static_cast<double>(qr[e]) * kr[e];
          score[static_cast<size_t>(s)] = dot * scale;
          mx = std::max(mx, score[static_cast<size_t>(s)]);
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        double sum = 0;
        for (int64_t s = 0; s < kv_len; ++s) {
          if (!vis[s]) continue;
          const double p = std::exp(score[static_cast<size_t>(s)] - mx);
          sum += p;
          const float* vr = &v[static_cast<size_t>(((b * S + s) * H + h) * Dh)];
          for (int64_t e = 0; e < Dh; ++e) acc[static_cast<size_t>(e)] += p * vr[e];
        }
        float* o = &out[static_cast<size_t>(((b * T + t) * H + h) * Dh)];
        if (sum > 0)
          for (int64_t e = 0; e < Dh; ++e) o[e] = static_cast<float>(acc[static_cast<size_t>(e)] / sum);
      }
    }
  return out;
}

void kv_write(const AttentionDims& d, const std::vector<float>& src, const std::vector<uint32_t>& slots,
              std::vector<float>& cache) {
  const int64_t row = d.heads * d.head_dim;
  const bool per_batch = static_cast<int64_t>(slots.size()) == d.batch * d.tokens;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t t = 0; t < d.tokens; ++t) {
      const int64_t slot = slots[static_cast<size_t>(per_batch ? b * d.tokens + t : t)];
      if (slot >= d.slots) continue;
      std::copy_n(src.begin() + (b * d.tokens + t) * row, row, cache.begin() + (b * d.slots + slot) * row);
    }
}

}  // namespace vkspec::ref
