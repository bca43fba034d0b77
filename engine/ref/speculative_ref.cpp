#include "engine/ref/speculative_ref.h"

#include <algorithm>
#include <cmath>

#include "engine/ops/det_math.h"
#include "engine/ops/philox.h"
#include "engine/ops/speculative.h"

namespace vkspec::ref {
namespace {

// The weights of norm(max(p - q, 0)) (differences below FLT_MIN are 0), or of p itself where
// those are all zero: what spec_residual samples from and residual_distribution normalises.
std::vector<float> residual_weights(const float* p, const float* q, uint32_t vocab) {
  std::vector<float> w(vocab);
  for (uint32_t i = 0; i < vocab; ++i) {
    const float d = p[i] - q[i];
    w[i] = d >= det::kFloatMin ? d : 0.0f;
  }
  if (det::chunk_tree(vocab, [&](uint32_t i) { return w[i]; }).total() == 0.0f)
    for (uint32_t i = 0; i < vocab; ++i) w[i] = p[i] >= det::kFloatMin ? p[i] : 0.0f;
  return w;
}

}  // namespace

bool accept_rule(float a, float b, float u) {
  const float ub = u * b;
  return a > 0.0f && (a >= b || ub < a);
}

std::vector<uint32_t> spec_accept(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                  const std::vector<uint32_t>& draft, const std::vector<uint32_t>& positions,
                                  uint64_t seed, uint32_t purpose) {
  std::vector<uint32_t> out(draft.size());
  for (size_t j = 0; j < draft.size(); ++j) {
    const uint32_t x = draft[j];
    if (x >= vocab) continue;
    const size_t k = j * vocab + x;
    out[j] = accept_rule(p[k], q[k], philox::uniform(seed, positions[j], purpose, 0)) ? 1 : 0;
  }
  return out;
}

std::vector<uint32_t> spec_accept_values(const std::vector<float>& p_x, const std::vector<float>& q_x,
                                         const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose) {
  std::vector<uint32_t> out(p_x.size());
  for (size_t j = 0; j < p_x.size(); ++j)
    out[j] = accept_rule(p_x[j], q_x[j], philox::uniform(seed, positions[j], purpose, 0)) ? 1 : 0;
  return out;
}

std::vector<uint32_t> spec_residual_sample(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                           const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose,
                                           const std::vector<uint32_t>& accept, const std::vector<uint32_t>& draft) {
  std::vector<uint32_t> out(positions.size());
  for (size_t j = 0; j < positions.size(); ++j) {
    if (!accept.empty() && accept[j] != 0) {
      out[j] = draft[j];
      continue;
    }
    const std::vector<float> w = residual_weights(&p[j * vocab], &q[j * vocab], vocab);
    auto weight = [&](uint32_t i) { return w[i]; };
    const det::ChunkTree tree = det::chunk_tree(vocab, weight);
    if (tree.total() == 0.0f) {
      out[j] = ops::kNoToken;
      continue;
    }
    const float t = philox::uniform(seed, positions[j], purpose, 0) * tree.total();
    out[j] = det::descend(tree, t, weight);
  }
  return out;
}

std::vector<float> pooled_prob(const std::vector<float>& p, uint32_t vocab, const std::vector<uint32_t>& tokens,
                               const std::vector<uint32_t>& neighbours, uint32_t k_max, uint32_t k) {
  std::vector<float> out(tokens.size());
  for (size_t j = 0; j < tokens.size(); ++j) {
    const uint32_t x = tokens[j];
    float s = 0.0f;
    if (x < vocab) {
      for (uint32_t m = 0; m < k; ++m) {
        const uint32_t y = neighbours[size_t{x} * k_max + m];
        if (y < vocab) s = s + p[j * vocab + y];
      }
    }
    out[j] = s;
  }
  return out;
}

std::vector<float> residual_distribution(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab) {
  std::vector<float> out(p.size(), 0.0f);
  for (size_t j = 0; j < p.size() / vocab; ++j) {
    const std::vector<float> w = residual_weights(&p[j * vocab], &q[j * vocab], vocab);
    const float total = det::chunk_tree(vocab, [&](uint32_t i) { return w[i]; }).total();
    if (total > 0.0f) {
      const float inv = det::recip_det(total);
      for (uint32_t i = 0; i < vocab; ++i) out[j * vocab + i] = w[i] * inv;
    }
  }
  return out;
}

TreeTestResult tree_tests(const std::vector<float>& probs, const std::vector<float>& q, uint32_t vocab,
                          const std::vector<uint32_t>& draft, const std::vector<int32_t>& parent,
                          const std::vector<uint32_t>& positions, const TreeTestKeys& keys) {
  const size_t M = draft.size();
  const bool keyed = !keys.seeds.empty();
  auto seed_of = [&](size_t j) { return keyed ? keys.seeds[j] : keys.seed; };
  auto round_of = [&](size_t j, size_t which) { return keyed ? keys.rounds[2 * j + which] : 0u; };
  TreeTestResult out{std::vector<uint32_t>(M, 0), std::vector<uint32_t>(M, 0)};
  const std::vector<float> zeros(vocab, 0.0f);
  for (size_t p = 0; p < M; ++p) {
    std::vector<float> r(probs.begin() + static_cast<std::ptrdiff_t>(p * vocab),
                         probs.begin() + static_cast<std::ptrdiff_t>((p + 1) * vocab));
    uint32_t sibling = 0;
    for (size_t c = p + 1; c < M; ++c) {
      if (parent[c] != static_cast<int32_t>(p)) continue;
      if (draft[c] >= vocab) continue;  // no candidate: rejected (accept stays 0), r unchanged
      const std::vector<float> qc(q.begin() + static_cast<std::ptrdiff_t>(c * vocab),
                                  q.begin() + static_cast<std::ptrdiff_t>((c + 1) * vocab));
      out.accept[c] = spec_accept(r, qc, vocab, {draft[c]}, {positions[2 * c]}, seed_of(c),
                                  keys.accept_purpose + ((round_of(c, 0) + sibling) << 8))[0];
      r = residual_distribution(r, qc, vocab);
      ++sibling;
    }
    out.final_token[p] = spec_residual_sample(r, zeros, vocab, {positions[2 * p + 1]}, seed_of(p),
                                              keys.residual_purpose + (round_of(p, 1) << 8))[0];
  }
  return out;
}

std::vector<float> relax_neighbourhood(const std::vector<float>& p, uint32_t vocab, const std::vector<uint32_t>& draft,
                                       const std::vector<uint32_t>& neighbours, uint32_t k_max, uint32_t k, float delta,
                                       float per_mass) {
  std::vector<float> out(p);
  for (size_t j = 0; j < draft.size(); ++j) {
    const uint32_t x = draft[j];
    if (x >= vocab) continue;
    const float* row = p.data() + j * vocab;
    const float budget = delta + per_mass * row[x];
    float moved = 0.0f;
    uint32_t end = 1;
    for (uint32_t m = 1; m < k; ++m) {
      const uint32_t y = neighbours[size_t{x} * k_max + m];
      if (y >= vocab || y == x) continue;
      const float next = moved + row[y];
      if (next > budget) break;
      moved = next;
      end = m + 1;
    }
    for (uint32_t m = 1; m < end; ++m) {
      const uint32_t y = neighbours[size_t{x} * k_max + m];
      if (y < vocab && y != x) out[j * vocab + y] = 0.0f;
    }
    out[j * vocab + x] = row[x] + moved;
  }
  return out;
}

std::vector<float> exclude_neighbourhood(const std::vector<float>& q, const std::vector<float>& p,
                                         const std::vector<float>& relaxed, uint32_t vocab,
                                         const std::vector<uint32_t>& draft, const std::vector<uint32_t>& neighbours,
                                         uint32_t k_max, uint32_t count) {
  std::vector<float> out(q);
  for (size_t j = 0; j < draft.size(); ++j) {
    const uint32_t x = draft[j];
    if (x >= vocab || relaxed[j * vocab + x] == p[j * vocab + x]) continue;
    const float* row = q.data() + j * vocab;
    const auto listed = [&](uint32_t m) {
      const uint32_t y = neighbours[size_t{x} * k_max + m];
      return y < vocab && y != x ? y : vocab;
    };
    float mass = 0.0f;
    for (uint32_t m = 1; m <= count; ++m)
      if (listed(m) < vocab) mass = mass + row[listed(m)];
    const float rest = 1.0f - mass;
    const float inv = rest > 0.0f ? det::recip_det(rest) : 0.0f;
    for (uint32_t i = 0; i < vocab; ++i) out[j * vocab + i] = row[i] * inv;
    for (uint32_t m = 1; m <= count; ++m)
      if (listed(m) < vocab) out[j * vocab + listed(m)] = 0.0f;
  }
  return out;
}

namespace {

// The ascending order of a row's probabilities, ties by token id (ops::gsd_group_mass's keys).
bool gsd_key_less(const float* row, uint32_t a, uint32_t b) { return row[a] < row[b] || (row[a] == row[b] && a < b); }

float squared_distance(const std::vector<float>& e, uint32_t dim, uint32_t x, uint32_t y) {
  float d = 0.0f;
  for (uint32_t k = 0; k < dim; ++k) {
    const float t = e[size_t{x} * dim + k] - e[size_t{y} * dim + k];
    d = d + t * t;
  }
  return d;
}

}  // namespace

std::vector<float> gsd_group_mass(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                  const std::vector<uint32_t>& draft, const std::vector<float>& embeddings,
                                  uint32_t dim, const GsdGroup& g) {
  const uint32_t below = g.below, above = g.above;
  const float gap = g.gap, dist2 = g.dist2;
  std::vector<float> out(2 * draft.size(), 0.0f);
  std::vector<uint32_t> order(vocab);
  for (size_t j = 0; j < draft.size(); ++j) {
    const uint32_t x = draft[j];
    if (x >= vocab) continue;
    const float* row = p.data() + j * vocab;
    const float* qrow = q.data() + j * vocab;
    for (uint32_t i = 0; i < vocab; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return gsd_key_less(row, a, b); });
    const size_t r = static_cast<size_t>(std::find(order.begin(), order.end(), x) - order.begin());
    std::vector<uint32_t> group;
    for (size_t m = 1; m <= below && m <= r; ++m) group.push_back(order[r - m]);
    for (size_t m = 1; m <= above && r + m < vocab; ++m) group.push_back(order[r + m]);
    float a = row[x], b = qrow[x];
    for (uint32_t y : group) {
      if (gap < 1.0f && !(std::fabs(row[y] - row[x]) < gap)) continue;
      if (dist2 < 4.0f && !(squared_distance(embeddings, dim, x, y) < dist2)) continue;
      a = a + row[y];
      b = b + qrow[y];
    }
    out[j] = a;
    out[draft.size() + j] = b;
  }
  return out;
}

}  // namespace vkspec::ref
