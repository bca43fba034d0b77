#pragma once
// Feature statistics of the Fashion-MNIST test set under a classifier: what a method's samples are
// compared with for FID. Computed on the device (the same classifier code that judges samples)
// and cached in the cache directory, keyed by the classifier file's contents and the image count.
#include <string>

#include "eval/frechet.h"
#include "engine/vk/context.h"

namespace vkspec {

// limit > 0: only the first `limit` test images (tests).
GaussianStats fashion_mnist_test_stats(Context& ctx, const std::string& classifier_path, const std::string& dataset_dir,
                                       int64_t limit = 0);

}  // namespace vkspec
