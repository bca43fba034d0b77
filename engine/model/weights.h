#pragma once
// Device weights from a safetensors file, uploaded one tensor at a time as the model asks for
// them. The model states the shape its config implies, so a checkpoint that does not match the
// config fails at load with both shapes in the message, not as wrong numbers later.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/model/safetensors.h"
#include "engine/vk/context.h"

namespace vkspec {

class WeightStore {
 public:
  WeightStore(Context& ctx, const std::string& path);
  WeightStore(Context& ctx, SafetensorsFile file);
  WeightStore(const WeightStore&) = delete;
  WeightStore& operator=(const WeightStore&) = delete;

  const SafetensorsFile& file() const { return file_; }
  bool has(const std::string& name) const { return file_.has(name); }
  // The file's shape as a device Shape; throws when the rank exceeds kMaxRank.
  Shape shape(const std::string& name) const;

  // Uploads `name` as a new device tensor of `device_dtype`. The file shape must equal `expected`;
  // `expected_from` ("dim=768") says in the error where the expected shape came from.
  // Conversions: F32/F16/BF16 -> F32 or F16 (a finite value that overflows f16 is an error),
  // I32 -> I32. Anything else throws naming the file, the tensor and both dtypes.
  Tensor load(const std::string& name, const Shape& expected, DType device_dtype,
              const std::string& expected_from = {});

  // Tensors never passed to load(), in file order. Leftovers usually mean the checkpoint and the
  // model config disagree (a converter that renamed keys, a head the model does not build).
  std::vector<std::string> unused() const;
  uint64_t uploaded_bytes() const { return uploaded_bytes_; }

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what) const;

  Context& ctx_;
  SafetensorsFile file_;
  std::set<std::string> loaded_;
  uint64_t uploaded_bytes_ = 0;
};

}  // namespace vkspec
