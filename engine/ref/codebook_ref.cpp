#include "engine/ref/codebook_ref.h"

#include <algorithm>
#include <cmath>

namespace vkspec::ref {
namespace {

double norm(const float* v, int64_t d) {
  double s = 0;
  for (int64_t i = 0; i < d; ++i) s += double(v[i]) * v[i];
  return std::sqrt(s);
}

}  // namespace

std::vector<float> codebook_lookup(const std::vector<uint32_t>& ids, const std::vector<float>& codebook,
                                   int64_t e_dim) {
  const size_t n_e = codebook.size() / static_cast<size_t>(e_dim), d = static_cast<size_t>(e_dim);
  std::vector<float> out(ids.size() * d);
  for (size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] >= n_e) {
      std::fill(out.begin() + static_cast<long>(t * d), out.begin() + static_cast<long>((t + 1) * d), NAN);
      continue;
    }
    const float* row = &codebook[ids[t] * d];
    const double inv = 1.0 / std::max(norm(row, e_dim), 1e-12);
    for (size_t i = 0; i < d; ++i) out[t * d + i] = static_cast<float>(row[i] * inv);
  }
  return out;
}

std::vector<double> codebook_scores(const float* z, const std::vector<float>& codebook, int64_t e_dim) {
  const size_t n_e = codebook.size() / static_cast<size_t>(e_dim);
  const double zn = norm(z, e_dim);
  std::vector<double> s(n_e);
  for (size_t i = 0; i < n_e; ++i) {
    const float* e = &codebook[i * static_cast<size_t>(e_dim)];
    const double en = norm(e, e_dim);
    double dot = 0;
    for (int64_t k = 0; k < e_dim; ++k) dot += double(z[k]) * e[k];
    s[i] = zn == 0 || en == 0 ? 0.0 : dot / (zn * en);
  }
  return s;
}

std::vector<uint32_t> codebook_quantize(const std::vector<float>& latents, const std::vector<float>& codebook,
                                        int64_t e_dim) {
  const size_t count = latents.size() / static_cast<size_t>(e_dim);
  std::vector<uint32_t> ids(count);
  for (size_t t = 0; t < count; ++t) {
    const auto s = codebook_scores(&latents[t * static_cast<size_t>(e_dim)], codebook, e_dim);
    ids[t] = static_cast<uint32_t>(std::max_element(s.begin(), s.end()) - s.begin());
  }
  return ids;
}

}  // namespace vkspec::ref
