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

// One row's filtered weights (ops/sampler.h steps 2-5, and E).
struct Row {
  std::vector<float> z, e;
  float m = 0;
  uint32_t max_key = 0, first_max = 0;  // first_max: Argmax's token (step E's scaling keeps it)
  det::ChunkTree tree;
  float inv = 0;
};

// Steps 3-4: top-k on z, then e = exp(z - m) of the kept elements; `keep` says which were kept.
void top_k_weights(Row& w, uint32_t top_k, std::vector<uint32_t>& order, std::vector<bool>& keep) {
  const uint32_t vocab = static_cast<uint32_t>(w.z.size());
  std::fill(keep.begin(), keep.end(), top_k == 0);
  if (top_k) {
    std::iota(order.begin(), order.end(), 0u);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ka = order_key(w.z[a]), kb = order_key(w.z[b]);
      return ka != kb ? ka > kb : a < b;
    });
    for (uint32_t j = 0; j < top_k; ++j) keep[order[j]] = true;
  }
  for (uint32_t i = 0; i < vocab; ++i) {
    const float x = w.z[i] - w.m;
    w.e[i] = keep[i] ? det::exp_det(x) : 0.0f;
  }
}

void build_tree(Row& w) {
  w.tree = det::chunk_tree(static_cast<uint32_t>(w.e.size()), [&](uint32_t i) { return w.e[i]; });
  w.inv = det::recip_det(w.tree.total());
}

// Step E: the row's reciprocal temperature from the entropy of the filtered p = e / S (z = l).
float entropy_inv_temp(const Row& w, const ops::SamplerParams& params) {
  const det::ChunkTree d = det::chunk_tree(static_cast<uint32_t>(w.e.size()), [&](uint32_t i) {
    float x = w.m - w.z[i];
    x = w.e[i] * x;
    return x;
  });
  float h = d.total() * w.inv;
  h = det::log_det(w.tree.total()) + h;
  const float x = h * ops::entropy_neg_inv_b(params.entropy.b);
  float k = params.entropy.a * det::exp_det(x);
  k = k + params.entropy.c;
  const float t = params.temperature * k;
  return det::recip_det(std::max(t, 1e-5f));
}

// Step E: the kept elements re-weighted at reciprocal temperature t; z becomes z * t.
void temper(Row& w, float t, const std::vector<bool>& keep, bool by_top_p) {
  const float mt = w.m * t;
  for (size_t i = 0; i < w.z.size(); ++i) {
    const bool kept = by_top_p ? w.e[i] > 0.0f : keep[i];
    w.z[i] = w.z[i] * t;
    const float x = w.z[i] - mt;
    w.e[i] = kept ? det::exp_det(x) : 0.0f;
  }
  build_tree(w);
}

// Steps 1-5 and E for row r; w.z ends as the z the draw uses.
void filtered_row(Row& w, const float* c, const float* u, const ops::SamplerParams& params,
                  std::vector<uint32_t>& order, std::vector<bool>& keep) {
  const uint32_t vocab = static_cast<uint32_t>(w.z.size());
  const float inv_temp = params.entropy.on ? 1.0f : ops::inverse_temperature(params.temperature);
  w.max_key = 0;
  for (uint32_t i = 0; i < vocab; ++i) {
    float l = c[i];
    if (u) {
      float d = l - u[i];
      d = d * params.cfg_scale;
      l = u[i] + d;
    }
    w.z[i] = l * inv_temp;
    w.max_key = std::max(w.max_key, order_key(w.z[i]));
  }
  w.m = det::key_float(w.max_key);
  w.first_max = 0;
  while (order_key(w.z[w.first_max]) != w.max_key) ++w.first_max;
  top_k_weights(w, params.top_k < vocab ? params.top_k : 0, order, keep);
  build_tree(w);
  const uint32_t top_p24 = ops::top_p_fixed(params.top_p);
  if (top_p24 < (1u << 24)) {
    top_p_filter(w.e, w.inv, top_p24, order);
    build_tree(w);
  }
  if (params.entropy.on) temper(w, entropy_inv_temp(w, params), keep, top_p24 < (1u << 24));
}

// Step 7's token from the row's weights.
uint32_t draw(const Row& w, const ops::SamplerParams& params, uint32_t pos) {
  const uint32_t vocab = static_cast<uint32_t>(w.z.size());
  switch (params.mode) {
    case ops::SampleMode::Categorical: {
      const float t = philox::uniform(params.seed, pos, params.purpose, 0) * w.tree.total();
      return det::descend(w.tree, t, [&](uint32_t i) { return w.e[i]; });
    }
    case ops::SampleMode::GumbelMax: {
      uint32_t best = 0, best_key = 0;
      bool found = false;
      for (uint32_t i = 0; i < vocab; ++i) {
        if (!(w.e[i] > 0.0f)) continue;
        const float v = w.z[i] + philox::gumbel(params.seed, pos, params.purpose, i);
        if (!found || order_key(v) > best_key) {
          best_key = order_key(v);
          best = i;
          found = true;
        }
      }
      return best;
    }
    case ops::SampleMode::Argmax: return w.first_max;
    case ops::SampleMode::None: break;
  }
  return 0;
}

}  // namespace

SamplerResult sampler(const std::vector<float>& logits, uint32_t vocab, const std::vector<uint32_t>& positions,
                      const ops::SamplerParams& params) {
  const size_t in_rows = logits.size() / vocab;
  const uint32_t rows = static_cast<uint32_t>(params.cfg ? in_rows / 2 : in_rows);
  const bool interleaved = params.cfg && params.cfg_layout == ops::CfgLayout::Interleaved;
  SamplerResult out;
  out.probs.resize(size_t{rows} * vocab);
  if (params.mode != ops::SampleMode::None) out.tokens.resize(rows);

  Row w;
  w.z.resize(vocab);
  w.e.resize(vocab);
  std::vector<uint32_t> order(vocab);
  std::vector<bool> keep(vocab);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* c = &logits[(interleaved ? 2 * size_t{r} : r) * vocab];
    const float* u = params.cfg ? (interleaved ? c + vocab : &logits[(size_t{rows} + r) * vocab]) : nullptr;
    filtered_row(w, c, u, params, order, keep);
    if (params.mode != ops::SampleMode::None) out.tokens[r] = draw(w, params, positions.empty() ? 0 : positions[r]);
    for (uint32_t i = 0; i < vocab; ++i) out.probs[size_t{r} * vocab + i] = w.e[i] * w.inv;
  }
  return out;
}

}  // namespace vkspec::ref
