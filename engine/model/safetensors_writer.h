#pragma once
// Writes safetensors files that SafetensorsFile (and tools/safetensors_io.py) read back: tensors
// packed in insertion order with no gaps, the JSON padded with spaces so the data section starts
// 8-byte aligned. Used by tests and by anything that dumps tensors (traces, parity checks).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/safetensors.h"

namespace vkspec {

class SafetensorsWriter {
 public:
  void set_metadata(const std::string& key, const std::string& value);
  // Copies the raw little-endian bytes; bytes must equal numel(shape) * st_dtype_size(dtype).
  void add(const std::string& name, StDType dtype, const std::vector<int64_t>& shape, const void* data, size_t bytes);
  // Stores floats as F32, F16 or BF16 (rounded to nearest even).
  void add_f32(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values,
               StDType stored = StDType::F32);
  // Writes path.tmp, then renames it over path, so a reader never sees a half-written file.
  // Throws vkspec::Error naming the path.
  void write(const std::string& path) const;
  // The file's bytes in memory (for SafetensorsFile(name, bytes)). Empties the writer, freeing
  // each tensor once copied, so a model of several GB needs its size once plus one tensor.
  std::vector<uint8_t> take_bytes();

 private:
  // The 8-byte length and the padded JSON header for the current entries.
  std::string header() const;

  struct Entry {
    std::string name;
    StDType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::vector<Entry> entries_;
};

}  // namespace vkspec
