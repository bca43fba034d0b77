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

// Fewer images than this give no FID-infinity: subsets of a fifth of them are too small to fit.
constexpr int64_t kFidInfinityMinImages = 50;

// features [n, dim]: FID against `reference` on subsets of `points` sizes evenly spaced from n / 5
// to n (the largest the whole set), each a random subset drawn with a fixed seed (the same images
// give the same value), then the intercept of the fit against 1 / N. nullopt below
// kFidInfinityMinImages.
std::optional<double> fid_infinity(const std::vector<float>& features, int64_t n, int64_t dim,
                                   const FrechetReference& reference, int points = 8);

}  // namespace vkspec
