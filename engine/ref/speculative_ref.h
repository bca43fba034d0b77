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
// stays 0) and final tokens per node. parent: -1 for the root; positions: [M, 2]. seeds ([M]) and
// rounds ([M, 2]) given: the per-row keys of ops::RowKeys as tree_tests reads them.
struct TreeTestResult {
  std::vector<uint32_t> accept, final_token;
};
TreeTestResult tree_tests(const std::vector<float>& probs, const std::vector<float>& q, uint32_t vocab,
                          const std::vector<uint32_t>& draft, const std::vector<int32_t>& parent,
                          const std::vector<uint32_t>& positions, uint64_t seed, uint32_t accept_purpose,
                          uint32_t residual_purpose, const std::vector<uint64_t>& seeds = {},
                          const std::vector<uint32_t>& rounds = {});

// ops::gsd_group_mass: [2, N] (the group sums of p, then of q); embeddings [V, dim].
std::vector<float> gsd_group_mass(const std::vector<float>& p, const std::vector<float>& q, uint32_t vocab,
                                  const std::vector<uint32_t>& draft, const std::vector<float>& embeddings,
                                  uint32_t dim, uint32_t below, uint32_t above, float gap, float dist2);

std::vector<float> relax_neighbourhood(const std::vector<float>& p, uint32_t vocab, const std::vector<uint32_t>& draft,
                                       const std::vector<uint32_t>& neighbours, uint32_t k_max, uint32_t k, float delta,
                                       float per_mass = 0.0f);

std::vector<float> exclude_neighbourhood(const std::vector<float>& q, const std::vector<float>& p,
                                         const std::vector<float>& relaxed, uint32_t vocab,
                                         const std::vector<uint32_t>& draft, const std::vector<uint32_t>& neighbours,
                                         uint32_t k_max, uint32_t count);

}  // namespace vkspec::ref
