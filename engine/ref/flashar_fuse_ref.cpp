#include "engine/ref/flashar_fuse_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {
namespace {

// x centred and scaled: per head (joint false) the RMS + 1e-6, joint the RMS floored at 1e-3.
std::vector<double> normalised(const std::vector<double>& x, bool joint) {
  const double n = static_cast<double>(x.size());
  double mean = 0, sq = 0;
  for (double e : x) mean += e;
  mean /= n;
  for (double e : x) sq += (e - mean) * (e - mean);
  const double scale = joint ? std::sqrt(std::max(sq / n, 1e-6)) : std::sqrt(sq / n) + 1e-6;
  std::vector<double> z;
  for (double e : x) z.push_back(std::clamp((e - mean) / scale, -6.0, 6.0));
  return z;
}

double gate_of(const float* h, const float* v, const std::vector<float>& fc1, const std::vector<float>& gate, int64_t n,
               bool joint) {
  std::vector<double> zh(h, h + n), zv(v, v + n);
  if (joint) {
    std::vector<double> both = zh;
    both.insert(both.end(), zv.begin(), zv.end());
    both = normalised(both, true);
    zh.assign(both.begin(), both.begin() + n);
    zv.assign(both.begin() + n, both.end());
  } else {
    zh = normalised(zh, false);
    zv = normalised(zv, false);
  }
  const size_t hidden = gate.size() - 1;
  double y = gate[hidden];
  for (size_t k = 0; k < hidden; ++k) {
    const float* row = fc1.data() + k * static_cast<size_t>(2 * n);
    double a = 0;
    for (int64_t i = 0; i < n; ++i) a += row[i] * zh[static_cast<size_t>(i)] + row[n + i] * zv[static_cast<size_t>(i)];
    y += gate[k] * a / (1.0 + std::exp(-a));
  }
  return 1.0 / (1.0 + std::exp(-y));
}

}  // namespace

FlashArFused flashar_fuse(const std::vector<float>& h, const std::vector<float>& v,
                          const std::vector<uint32_t>& sources, const std::vector<float>& fc1,
                          const std::vector<float>& gate, int64_t vocab, bool joint) {
  const size_t rows = sources.size() / 3, n = static_cast<size_t>(vocab);
  FlashArFused out{std::vector<float>(rows * n), std::vector<float>(rows)};
  for (size_t r = 0; r < rows; ++r) {
    const float* hr = h.data() + sources[r * 3] * n;
    const float* vr = v.data() + sources[r * 3 + 1] * n;
    const uint32_t kind = sources[r * 3 + 2];
    const double g = kind == 1 ? 1.0 : kind == 2 ? 0.0 : gate_of(hr, vr, fc1, gate, vocab, joint);
    out.gates[r] = static_cast<float>(g);
    for (size_t i = 0; i < n; ++i) out.fused[r * n + i] = static_cast<float>(g * hr[i] + (1.0 - g) * vr[i]);
  }
  return out;
}

}  // namespace vkspec::ref
