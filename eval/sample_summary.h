#pragma once
// What `vkspec bench` reports of one run, computed from its per-image records (eval/sample_set.h),
// so a live run, a resumed one and a merge of shards give the same numbers for the same images.
#include <cstdint>
#include <vector>

#include "eval/sample_set.h"

namespace vkspec {

struct SampleSummary {
  int64_t images = 0;
  double nfe_mean = 0, draft_forwards_mean = 0, head_forwards_mean = 0, accepted_length_mean = 0;
  // Every forward of every model per image: target, drafter or low-resolution model, draft heads.
  double all_forwards_mean() const { return nfe_mean + draft_forwards_mean + head_forwards_mean; }
  double latency_median = 0, latency_p90 = 0;  // wall ms per image
  double tokens_per_s = 0, islands_mean = 0;
  double busy_ms = 0, device_ms = 0;                                                       // totals over the images
  std::vector<double> stage_ms_mean = std::vector<double>(ImageRecord::kStageCount, 0.0);  // per image
  WorkCounters work;                                                                       // totals over the images
  double class_accuracy = -1;                                                              // -1: not judged
  std::vector<float> features;  // [judged images, feature_dim], in seed order
  int64_t feature_dim = 0;
  // Per image, in seed order: what intervals and paired differences (eval/run_quality.h) are
  // computed from, so they too depend on which images a run holds, not on the order they came in.
  std::vector<uint64_t> image_seeds;
  std::vector<double> image_nfe, image_wall_ms;
  std::vector<int> image_correct;  // 1 or 0 as the classifier judged; -1 not judged
};

// Images are taken in seed order whatever order the set holds them in.
SampleSummary summarize_samples(const SampleSet& set);

// Linear interpolation between order statistics (q in [0, 1]); 0 for no values.
double percentile(std::vector<double> v, double q);

}  // namespace vkspec
