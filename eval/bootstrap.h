#pragma once
// Percentile bootstrap interval of a mean (Efron & Tibshirani 1993, ch. 13): the mean of
// `resamples` resamples of the values drawn with replacement, and the interval between the
// (1 - level) / 2 and (1 + level) / 2 quantiles of those means. The generator has a fixed seed, so
// the same values (in the same order) give the same interval on every run and platform. Used for
// class accuracy (values 0 and 1 per image).
#include <cstdint>
#include <vector>

namespace vkspec {

struct Interval {
  double low = 0, high = 0;
  bool contains(double v) const { return low <= v && v <= high; }
};

// At least one value (throws Error otherwise); 0 < level < 1.
Interval bootstrap_mean_interval(const std::vector<double>& values, int resamples = 2000, double level = 0.95,
                                 uint64_t seed = 0x626f6f74ull /* "boot" */);

}  // namespace vkspec
