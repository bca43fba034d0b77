#pragma once
// FID-infinity (Chong & Forsyth, "Effectively Unbiased FID and Inception Score and where to find
// them", CVPR 2020): FID is biased upwards by about b / N at N images, the bias depending on the
// generator, so FIDs from different N (or methods) do not compare. Computing FID on random subsets
// of several sizes N, fitting FID(N) = a + b / N by least squares and reporting the intercept a
// estimates the FID of infinitely many images.
#include <cstdint>
#include <optional>
#include <vector>

#include "eval/frechet.h"

namespace vkspec {

struct LineFit {
  double intercept = 0, slope = 0;
};
// Least-squares y = intercept + slope * x; at least two distinct x (throws Error otherwise).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// The fewest images that give FID-infinity: 50, and 5 per feature dimension (1280 for the shipped
// classifier's 256), so that the smallest subset (n / 5) has at least as many images as
// dimensions. Below that the subsets' covariances are rank-deficient and FID(N) is not a + b / N.
// Gaussian features at dim 64, population distance 2.03, means of 10 draws: at n = 40, 80, 160,
// 320, 640 FID is 15.2, 7.7, 4.7, 3.3, 2.6 and FID-infinity 11.1, 2.9, 1.0, 1.8, 1.9 (dim 256
// alike: at n = 1200 FID 12.8, FID-infinity 6.5, distance 8.0). On 60 of the shipped model's
// images (256 dims) it came out negative.
int64_t fid_infinity_min_images(int64_t dim);

// features [n, dim]: FID against `reference` on subsets of `points` sizes evenly spaced from n / 5
// to n (the largest the whole set), each a random subset drawn with a fixed seed (the same images
// give the same value), then the intercept of the fit against 1 / N. nullopt below
// fid_infinity_min_images(dim).
std::optional<double> fid_infinity(const std::vector<float>& features, int64_t n, int64_t dim,
                                   const FrechetReference& reference, int points = 8);

}  // namespace vkspec
