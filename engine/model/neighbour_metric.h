#pragma once
// How "near" is measured when CodebookNeighbours lists each codebook entry's nearest entries
// (LANTERN's latent proximity, and MuLo-SD's pooling that borrows it). LANTERN's ablation (Jang
// et al., ICLR 2025, section 4.3.1) compares L2 distance, cosine similarity and random selection.
#include <array>
#include <string>

namespace vkspec {

enum class NeighbourMetric {
  L2,      // L2 distance between the raw codebook rows (the default)
  Cosine,  // cosine similarity: L2 distance between the rows scaled to unit length
  Random,  // a seeded random order of the other entries: the ablation's control
};

constexpr int kNeighbourMetricCount = 3;
constexpr std::array<const char*, kNeighbourMetricCount> kNeighbourMetricNames = {"l2", "cosine", "random"};

inline const char* neighbour_metric_name(NeighbourMetric m) { return kNeighbourMetricNames[static_cast<int>(m)]; }
// Throws Error listing the names for an unknown one.
NeighbourMetric parse_neighbour_metric(const std::string& name);

}  // namespace vkspec
