#pragma once
// The Fashion-MNIST test set under a classifier: what a method's samples are compared with. Its
// Gaussian statistics (FID, FID-infinity) and feature vectors (KID, precision and recall; up to
// kMaxReferenceFeatures of them, a fixed evenly spaced subset of larger sets). Computed on the
// device (the same classifier code that judges samples) and cached in the cache directory, keyed
// by the file format, the classifier file's contents and the image count.
#include <string>
#include <vector>

#include "eval/frechet.h"
#include "engine/vk/context.h"

namespace vkspec {

constexpr int64_t kMaxReferenceFeatures = 10000;  // Fashion-MNIST's whole test set; 10 MB at 256-d

struct ReferenceSet {
  GaussianStats stats;          // of every test image
  std::vector<float> features;  // [feature_count, stats.dim]
  int64_t feature_count = 0;
};

// limit > 0: only the first `limit` test images (tests).
ReferenceSet fashion_mnist_test_reference(Context& ctx, const std::string& classifier_path,
                                          const std::string& dataset_dir, int64_t limit = 0);
// Its statistics alone.
GaussianStats fashion_mnist_test_stats(Context& ctx, const std::string& classifier_path, const std::string& dataset_dir,
                                       int64_t limit = 0);

}  // namespace vkspec
