#include "eval/sample_summary.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace vkspec {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

SampleSummary summarize_samples(const SampleSet& set) {
  SampleSummary s;
  s.images = static_cast<int64_t>(set.images.size());
  if (s.images == 0) return s;
  std::vector<double> lat;
  double tokens = 0, ms = 0, acc_len = 0;
  int64_t judged = 0, correct = 0;
  // Seed order: a live run holds resumed images first, a merge sorts them; both agree this way.
  std::vector<size_t> order(set.images.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return set.images[a].seed < set.images[b].seed; });
  for (size_t index : order) {
    const ImageRecord& r = set.images[index];
    s.image_seeds.push_back(r.seed);
    s.image_nfe.push_back(static_cast<double>(r.nfe));
    s.image_wall_ms.push_back(r.wall_ms);
    s.image_correct.push_back(r.predicted < 0 ? -1 : r.predicted == r.class_id ? 1 : 0);
    s.nfe_mean += static_cast<double>(r.nfe);
    s.draft_forwards_mean += static_cast<double>(r.draft_forwards);
    s.head_forwards_mean += static_cast<double>(r.head_forwards);
    for (size_t k = 0; k < s.stage_ms_mean.size() && k < r.stage_ms.size(); ++k) s.stage_ms_mean[k] += r.stage_ms[k];
    s.islands_mean += static_cast<double>(r.islands);
    acc_len += r.nfe ? static_cast<double>(r.tokens.size()) / static_cast<double>(r.nfe) : 0.0;
    tokens += static_cast<double>(r.tokens.size());
    ms += r.wall_ms;
    lat.push_back(r.wall_ms);
    s.busy_ms += r.busy_ms;
    s.device_ms += r.device_ms;
    s.work += r.work;
    if (r.predicted >= 0) {
      ++judged;
      correct += r.predicted == r.class_id;
      if (s.feature_dim == 0) s.feature_dim = static_cast<int64_t>(r.features.size());
      if (static_cast<int64_t>(r.features.size()) != s.feature_dim)
        throw Error("samples: images with different feature sizes in one run");
      s.features.insert(s.features.end(), r.features.begin(), r.features.end());
    }
  }
  const double n = static_cast<double>(s.images);
  s.nfe_mean /= n;
  s.draft_forwards_mean /= n;
  s.head_forwards_mean /= n;
  for (double& v : s.stage_ms_mean) v /= n;
  s.islands_mean /= n;
  s.accepted_length_mean = acc_len / n;
  s.latency_median = percentile(lat, 0.5);
  s.latency_p90 = percentile(lat, 0.9);
  s.tokens_per_s = ms > 0 ? tokens / (ms / 1000.0) : 0;
  if (judged) s.class_accuracy = static_cast<double>(correct) / static_cast<double>(judged);
  return s;
}

}  // namespace vkspec
