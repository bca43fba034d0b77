#pragma once
// Reads NumPy .npy files of floats (what Python pipelines such as LlamaGen's T5 feature
// extraction save with np.save): format versions 1-3, little-endian f4 or f2, C order.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, converted to f32
};

// Throws Error naming the file for anything else (missing, truncated, other dtype, Fortran order).
NpyArray read_npy_floats(const std::string& path);

}  // namespace vkspec
