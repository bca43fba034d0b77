#pragma once
// Fashion-MNIST from the Debian package dataset-fashion-mnist: gzip-compressed IDX files, images
// zero-padded from 28x28 to 32x32 and scaled to [-1, 1] (0 -> -1), as tools/common.py prepares
// them for training.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

struct FashionMnist {
  int64_t count = 0, size = 32;
  std::vector<float> images;    // [count, 32, 32] in [-1, 1]
  std::vector<int32_t> labels;  // [count]
};

// Default directory of the Debian package.
const char* fashion_mnist_dir();
// split: "train" or "test"; limit > 0 reads only the first `limit` images. Throws Error naming
// the file when it is missing, not gzip, or not the IDX layout expected.
FashionMnist load_fashion_mnist(const std::string& dir, const std::string& split, int64_t limit = 0);

}  // namespace vkspec
