#pragma once
// vkspec bench's quality table and JSON fields with intervals (eval/run_quality.h): per run, class
// accuracy with its bootstrap interval, KID with its standard error, FID-infinity, the paired
// differences against ar on equal seeds (forwards, wall ms per image, class accuracy) marked "n.s."
// where their 95 % interval contains 0, and precision and recall when computed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/run_quality.h"

namespace vkspec::cli {

struct QualityRow {
  std::string method, options;
  int64_t images = 0;
  double class_accuracy = -1;  // -1: not judged
  int64_t feature_dim = 0;     // the classifier's features (0: not judged)
  const RunQuality* quality = nullptr;
};

void print_quality_table(const std::vector<QualityRow>& rows, bool precision_recall);

// kid, kid_se, fid_inf, class_accuracy_ci, vs_ar {nfe, time_ms, class_accuracy: {diff, se, ci,
// pairs, significant}}, precision, recall: null where not computed.
nlohmann::json quality_json(const RunQuality& q);

}  // namespace vkspec::cli
