#pragma once
// Gaussian statistics of feature vectors and the Frechet distance between two Gaussians,
//   d^2 = |mu1 - mu2|^2 + tr(S1) + tr(S2) - 2 tr((S1^1/2 S2 S1^1/2)^1/2),
// the quantity FID reports (here in the shipped classifier's feature space). The symmetric form
// needs only symmetric eigendecompositions, computed in float64 by cyclic Jacobi.
#include <cstdint>
#include <vector>

namespace vkspec {

struct GaussianStats {
  int64_t dim = 0, count = 0;
  std::vector<double> mean;  // [dim]
  std::vector<double> cov;   // [dim, dim], unbiased (count - 1)
};

// features: [n, dim] row-major; n >= 2.
GaussianStats gaussian_stats(const std::vector<float>& features, int64_t n, int64_t dim);
double frechet_distance(const GaussianStats& a, const GaussianStats& b);

// One side's statistics with the square root of its covariance, for the distance from the same
// statistics to many others (FID-infinity's subsets) at one eigendecomposition each, not two.
struct FrechetReference {
  GaussianStats stats;
  std::vector<double> sqrt_cov;  // S^1/2, [dim, dim]
};
FrechetReference frechet_reference(GaussianStats stats);
double frechet_distance(const FrechetReference& a, const GaussianStats& b);
// Eigenvalues (ascending) and eigenvectors (columns of vecs, [n, n] row-major) of symmetric m.
void symmetric_eigen(std::vector<double> m, int64_t n, std::vector<double>& values, std::vector<double>& vecs);

}  // namespace vkspec
