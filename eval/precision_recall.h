#pragma once
// Improved precision and recall (Kynkaanniemi et al., "Improved Precision and Recall Metric for
// Assessing Generative Models", NeurIPS 2019). Each set's manifold is the union of balls around
// its vectors, each ball's radius the distance to the vector's k-th nearest neighbour in its own
// set. Precision: the fraction of generated vectors inside the real manifold (are the samples
// realistic?); recall: the fraction of real vectors inside the generated manifold (do the samples
// cover the real variety?). O((n + m)^2 dim): pairwise distances within and across both sets.
// Both depend on the set sizes; the paper (and `vkspec bench --precision-recall`) compares equal
// numbers of real and generated vectors.
#include <cstdint>
#include <vector>

namespace vkspec {

struct PrecisionRecall {
  double precision = 0, recall = 0;
};

// real [n, dim], generated [m, dim]; both need more than k vectors (throws Error otherwise).
PrecisionRecall precision_recall(const std::vector<float>& real, int64_t n, const std::vector<float>& generated,
                                 int64_t m, int64_t dim, int k = 3);

}  // namespace vkspec
