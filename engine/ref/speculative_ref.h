#pragma once
// CPU references of the speculative primitives (engine/ops/speculative.h states the semantics).
// p and q are [N, V] row-major.
#include <cstdint>
#include <vector>

namespace vkspec::ref {

std::vector<uint32_t> spec_accept(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                  const std::vector<uint32_t>& draft, const std::vector<uint32_t>& positions,
                                  uint64_t seed, uint32_t purpose);

// The acceptance rule itself: a = p(x), b = q(x), u the position's uniform.
bool accept_rule(float a, float b, float u);

std::vector<uint32_t> spec_accept_values(const std::vector<float>& p_x, const std::vector<float>& q_x,
                                         const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose);

// accept and draft empty: residual sample for every row.
std::vector<uint32_t> spec_residual_sample(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                           const std::vector<uint32_t>& positions, uint64_t seed, uint32_t purpose,
                                           const std::vector<uint32_t>& accept = {},
                                           const std::vector<uint32_t>& draft = {});

std::vector<float> pooled_prob(const std::vector<float>& p, uint32_t vocab, const std::vector<uint32_t>& tokens,
                               const std::vector<uint32_t>& neighbours, uint32_t k_max, uint32_t k);

std::vector<float> residual_distribution(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab);

// ops::tree_tests composed from the references above: accept (children's entries; the root's
// stays 0) and final tokens per node. parent: -1 for the root; positions: [M, 2].
struct TreeTestResult {
  std::vector<uint32_t> accept, final_token;
};
// The draws' keys: the call's seed and purposes, or with seeds ([M]) and rounds ([M, 2]) given the
// per-row keys of ops::RowKeys as tree_tests reads them.
struct TreeTestKeys {
  uint64_t seed = 0;
  uint32_t accept_purpose = 0, residual_purpose = 0;
  std::vector<uint64_t> seeds;
  std::vector<uint32_t> rounds;
};
TreeTestResult tree_tests(const std::vector<float>& probs, const std::vector<float>& q, uint32_t vocab,
                          const std::vector<uint32_t>& draft, const std::vector<int32_t>& parent,
                          const std::vector<uint32_t>& positions, const TreeTestKeys& keys);

// ops::gsd_group_mass: [2, N] (the group sums of p, then of q); embeddings [V, dim]. The group as
// ops::GsdGroupMass's below, above, gap and dist2.
struct GsdGroup {
  uint32_t below = 0, above = 0;
  float gap = 1.0f, dist2 = 4.0f;  // no filter
};
std::vector<float> gsd_group_mass(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                  const std::vector<uint32_t>& draft, const std::vector<float>& embeddings,
                                  uint32_t dim, const GsdGroup& g);

std::vector<float> relax_neighbourhood(const std::vector<float>& p, uint32_t vocab, const std::vector<uint32_t>& draft,
                                       const std::vector<uint32_t>& neighbours, uint32_t k_max, uint32_t k, float delta,
                                       float per_mass = 0.0f);

std::vector<float> exclude_neighbourhood(const std::vector<float>& q, const std::vector<float>& p,
                                         const std::vector<float>& relaxed, uint32_t vocab,
                                         const std::vector<uint32_t>& draft, const std::vector<uint32_t>& neighbours,
                                         uint32_t k_max, uint32_t count);

}  // namespace vkspec::ref
