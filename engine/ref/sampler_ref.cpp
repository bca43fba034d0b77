#include "engine/ref/sampler_ref.h"

#include <algorithm>
#include <numeric>

#include "engine/ops/det_math.h"
#include "engine/ops/philox.h"

namespace vkspec::ref {
namespace {

using det::order_key;

uint32_t fixed_prob(float e, float inv) {
  float q = e * inv;
  q = q * 2147483648.0f;
  return static_cast<uint32_t>(q);
}

// Top-p on fixed-point probabilities (ops/sampler.h step 5): zeroes what it drops.
void top_p_filter(std::vector<float>& e, float inv, uint32_t top_p24, std::vector<uint32_t>& order) {
  const uint32_t n = static_cast<uint32_t>(e.size());
  uint64_t total = 0;
  for (float x : e) total += fixed_prob(x, inv);
  const uint64_t budget = (uint64_t{top_p24} * total) >> 24;
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t ka = order_key(e[a]), kb = order_key(e[b]);
    return ka != kb ? ka > kb : a < b;
  });
  uint64_t mass = 0;
  uint32_t kept = 0;
  while (kept < n && (kept == 0 || mass <= budget)) mass += fixed_prob(e[order[kept++]], inv);
  for (uint32_t j = kept; j < n; ++j) e[order[j]] = 0.0f;
}

}  // namespace

SamplerResult sampler(const std::vector<float>& logits, uint32_t vocab, const std::vector<uint32_t>& positions,
                      const ops::SamplerParams& params) {
  const size_t in_rows = logits.size() / vocab;
  const uint32_t rows = static_cast<uint32_t>(params.cfg ? in_rows / 2 : in_rows);
  const bool interleaved = params.cfg && params.cfg_layout == ops::CfgLayout::Interleaved;
  const float inv_temp = ops::inverse_temperature(params.temperature);
  const uint32_t top_k = params.top_k < vocab ? params.top_k : 0;
  const uint32_t top_p24 = ops::top_p_fixed(params.top_p);
  SamplerResult out;
  out.probs.resize(size_t{rows} * vocab);
  if (params.mode != ops::SampleMode::None) out.tokens.resize(rows);

  std::vector<float> z(vocab), e(vocab);
  std::vector<uint32_t> order(vocab);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* c = &logits[(interleaved ? 2 * size_t{r} : r) * vocab];
    const float* u = params.cfg ? (interleaved ? c + vocab : &logits[(size_t{rows} + r) * vocab]) : nullptr;
    uint32_t max_key = 0;
    for (uint32_t i = 0; i < vocab; ++i) {
      float l = c[i];
      if (u) {
        float d = l - u[i];
        d = d * params.cfg_scale;
        l = u[i] + d;
      }
      z[i] = l * inv_temp;
      max_key = std::max(max_key, order_key(z[i]));
    }
    const float m = det::key_float(max_key);

    std::vector<bool> keep(vocab, true);
    if (top_k) {
      std::iota(order.begin(), order.end(), 0u);
      std::partial_sort(order.begin(), order.begin() + top_k, order.end(), [&](uint32_t a, uint32_t b) {
        const uint32_t ka = order_key(z[a]), kb = order_key(z[b]);
        return ka != kb ? ka > kb : a < b;
      });
      std::fill(keep.begin(), keep.end(), false);
      for (uint32_t j = 0; j < top_k; ++j) keep[order[j]] = true;
    }
    for (uint32_t i = 0; i < vocab; ++i) {
      const float x = z[i] - m;
      e[i] = keep[i] ? det::exp_det(x) : 0.0f;
    }
    det::ChunkTree tree = det::chunk_tree(vocab, [&](uint32_t i) { return e[i]; });
    float inv = det::recip_det(tree.total());
    if (top_p24 < (1u << 24)) {
      top_p_filter(e, inv, top_p24, order);
      tree = det::chunk_tree(vocab, [&](uint32_t i) { return e[i]; });
      inv = det::recip_det(tree.total());
    }
    const float total = tree.total();

    const uint32_t pos = positions.empty() ? 0 : positions[r];
    switch (params.mode) {
      case ops::SampleMode::Categorical: {
        const float t = philox::uniform(params.seed, pos, params.purpose, 0) * total;
        out.tokens[r] = det::descend(tree, t, [&](uint32_t i) { return e[i]; });
        break;
      }
      case ops::SampleMode::GumbelMax: {
        uint32_t best = 0, best_key = 0;
        bool found = false;
        for (uint32_t i = 0; i < vocab; ++i) {
          if (!(e[i] > 0.0f)) continue;
          const float v = z[i] + philox::gumbel(params.seed, pos, params.purpose, i);
          if (!found || order_key(v) > best_key) {
            best_key = order_key(v);
            best = i;
            found = true;
          }
        }
        out.tokens[r] = best;
        break;
      }
      case ops::SampleMode::Argmax: {
        uint32_t i = 0;
        while (order_key(z[i]) != max_key) ++i;
        out.tokens[r] = i;
        break;
      }
      case ops::SampleMode::None:
        break;
    }
    for (uint32_t i = 0; i < vocab; ++i) out.probs[size_t{r} * vocab + i] = e[i] * inv;
  }
  return out;
}

}  // namespace vkspec::ref
