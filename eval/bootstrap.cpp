#include "eval/bootstrap.h"

#include "common/error.h"
#include "eval/sample_summary.h"
#include "eval/seeded_rng.h"

namespace vkspec {

Interval bootstrap_mean_interval(const std::vector<double>& values, int resamples, double level, uint64_t seed) {
  if (values.empty() || resamples < 1 || !(level > 0 && level < 1))
    throw Error("bootstrap interval: needs values, resamples and a level in (0, 1)");
  SeededRng rng(seed);
  const uint64_t n = values.size();
  std::vector<double> means(static_cast<size_t>(resamples));
  for (double& m : means) {
    double s = 0;
    for (uint64_t i = 0; i < n; ++i) s += values[static_cast<size_t>(rng.below(n))];
    m = s / static_cast<double>(n);
  }
  return {percentile(means, (1 - level) / 2), percentile(means, (1 + level) / 2)};
}

}  // namespace vkspec
