#pragma once
// Kernel inception distance (Binkowski et al., "Demystifying MMD GANs", ICLR 2018): the unbiased
// estimator of the squared maximum mean discrepancy between two sets of feature vectors under the
// cubic polynomial kernel k(x, y) = (x.y / d + 1)^3,
//   KID = sum_{i != j} k(x_i, x_j) / (n (n - 1)) + sum_{i != j} k(y_i, y_j) / (m (m - 1))
//         - 2 sum_{i, j} k(x_i, y_j) / (n m),
// unbiased at any n and m (so it can be negative when the sets come from the same distribution),
// unlike FID, whose bias grows as the sample shrinks.
//
// Standard error: the two-sample jackknife of the whole-sample estimate (Arvesen 1969), the sum
// over both sets of (count - 1) / count * sum of squared deviations of the leave-one-out
// estimates, each leave-one-out estimate computed exactly from kernel row sums. The common KID
// code (Binkowski et al.'s, torch-fidelity, clean-fid) instead reports the spread of estimates on
// random subsets of 1000; with fewer generated images than that every subset holds them all and
// that spread sees only the reference side, while the jackknife sees both.
#include <cstdint>
#include <vector>

namespace vkspec {

// The reference side's kernel sums, computed once (O(m^2 dim)) for any number of generated sets.
struct KidReference {
  int64_t count = 0, dim = 0;
  std::vector<float> features;   // [count, dim]
  std::vector<double> row_sums;  // sum_{j != i} k(y_i, y_j)
  double total = 0;              // sum_{i != j} k(y_i, y_j)
};
KidReference kid_reference(std::vector<float> features, int64_t count, int64_t dim);

struct KidEstimate {
  double kid = 0;
  double se = 0;  // NaN with fewer than 3 vectors on either side
};

// x: [n, dim] with n >= 2 (throws Error otherwise or when dim differs from the reference's).
KidEstimate kernel_inception_distance(const std::vector<float>& x, int64_t n, const KidReference& reference);

// k(a, b) = (a.b / dim + 1)^3 (the kernel, for tests and hand computations).
double kid_kernel(const float* a, const float* b, int64_t dim);

}  // namespace vkspec
