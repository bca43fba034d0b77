#pragma once
// Device weights from a safetensors file, uploaded one tensor at a time as the model asks for
// them. The model states the shape its config implies, so a checkpoint that does not match the
// config fails at load with both shapes in the message, not as wrong numbers later.
#include <cstdint>
#include <memory>
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

  const SafetensorsFile& file() const { return *file_; }
  // The file, for a model that keeps reading it on the host after loading (Janus-Pro's text
  // embedding table, gathered per prompt instead of held on the device).
  std::shared_ptr<const SafetensorsFile> shared_file() const { return file_; }
  bool has(const std::string& name) const { return file_->has(name); }
  // The file's shape as a device Shape; throws when the rank exceeds kMaxRank.
  Shape shape(const std::string& name) const;

  // Uploads `name` as a new device tensor of `device_dtype`. The file shape must equal `expected`;
  // `expected_from` ("dim=768") says in the error where the expected shape came from.
  // Conversions: F32/F16/BF16 -> F32 or F16 (a finite value that overflows f16 is an error),
  // I32 -> I32. Anything else throws naming the file, the tensor and both dtypes.
  Tensor load(const std::string& name, const Shape& expected, DType device_dtype,
              const std::string& expected_from = {});
  // Columns [first_col, first_col + n_cols) of the 2-D float tensor `name` (file shape `expected`)
  // as a new [rows, n_cols] device tensor of device_dtype (f32 or f16, converted as load does):
  // one part of a weight that the model multiplies in pieces. Marks `name` loaded; call it once
  // per part.
  Tensor load_columns(const std::string& name, const Shape& expected, int64_t first_col, int64_t n_cols,
                      DType device_dtype, const std::string& tensor_name, const std::string& expected_from = {});

  // Marks `name` used without uploading it, after load()'s checks of shape and values (device_dtype
  // F32: any float dtype): a table the model reads on the host through shared_file().
  const StTensorInfo& host_tensor(const std::string& name, const Shape& expected,
                                  const std::string& expected_from = {});

  // Tensors never passed to load(), in file order. Leftovers usually mean the checkpoint and the
  // model config disagree (a converter that renamed keys, a head the model does not build).
  std::vector<std::string> unused() const;
  uint64_t uploaded_bytes() const { return uploaded_bytes_; }

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what) const;
  // The checks load and load_columns share: present, of shape `expected`, finite, convertible.
  const StTensorInfo& checked(const std::string& name, const Shape& expected, DType device_dtype,
                              const std::string& expected_from) const;
  // n values value(i) as a new f32 or f16 tensor; a value f16 cannot hold fails naming element i.
  template <typename Value>
  Tensor upload_converted(const std::string& name, const Shape& shape, DType device_dtype, size_t n,
                          const std::string& tensor_name, Value value);

  Context& ctx_;
  std::shared_ptr<const SafetensorsFile> file_;
  std::set<std::string> loaded_;
  uint64_t uploaded_bytes_ = 0;
};

// A metadata key of a model file with the one value the engine implements for it.
struct MetaValue {
  const char* key;
  const char* value;
};

// Throws "path: not <what> (metadata vkspec.kind != kind)" unless the file's vkspec.kind is kind.
void require_kind(const SafetensorsFile& f, const std::string& path, const std::string& kind, const std::string& what);

// Throws naming path, the key, the file's value and the implemented one at the first of values
// the file's metadata lacks or gives another value.
void require_meta_values(const SafetensorsFile& f, const std::string& path, const MetaValue* values, size_t count);
template <size_t N>
void require_meta_values(const SafetensorsFile& f, const std::string& path, const MetaValue (&values)[N]) {
  require_meta_values(f, path, values, N);
}

}  // namespace vkspec
