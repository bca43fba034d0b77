#pragma once
// Paired comparison of two runs on the images both have (same seed = same class and sampling
// noise): the mean of the per-image differences B - A, its standard error and 95 % interval
// (Student's t with pairs - 1 degrees of freedom). Pairing removes the image-to-image spread (some
// classes and seeds need more forwards whatever the method), which is what decides whether a few
// percent fewer forwards, or a few points of accuracy, is real. What tools/paired_stats.py prints
// (it uses the normal 1.96 instead of t, the same to 1 % from 100 pairs on).
#include <cstdint>
#include <map>

#include "eval/bootstrap.h"

namespace vkspec {

struct PairedDifference {
  int64_t pairs = 0;
  double mean_a = 0, mean_b = 0;  // over the pairs
  double diff = 0;                // mean of b - a
  double se = 0;                  // NaN below 2 pairs
  Interval ci;                    // diff -+ t * se; NaN below 2 pairs
  // The interval excludes 0 (false below 2 pairs).
  bool significant() const { return pairs >= 2 && (ci.low > 0 || ci.high < 0); }
};

// Values by seed; seeds only one side has are left out. pairs == 0 when none is shared.
PairedDifference paired_difference(const std::map<uint64_t, double>& a, const std::map<uint64_t, double>& b);

// The 97.5 % quantile of Student's t with `df` >= 1 degrees of freedom (the 95 % two-sided
// interval's multiplier): a table to 30, then the Cornish-Fisher expansion (Abramowitz & Stegun
// 26.7.5; within 1e-5 there).
double t_quantile_975(int64_t df);

}  // namespace vkspec
