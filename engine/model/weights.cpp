#include "engine/model/weights.h"

#include <cstring>

#include "common/error.h"

namespace vkspec {

namespace {

float load_float(StDType t, const uint8_t* p, size_t i) {
  if (t == StDType::F32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  return t == StDType::F16 ? half_to_float(h) : bf16_to_float(h);
}

bool is_float(StDType t) { return t == StDType::F32 || t == StDType::F16 || t == StDType::BF16; }

// Index of the first NaN or Inf (all-ones exponent), or n. A corrupt or badly converted checkpoint
// otherwise loads fine and silently samples garbage.
size_t first_non_finite(StDType t, const uint8_t* p, size_t n) {
  if (t == StDType::F32) {
    for (size_t i = 0; i < n; ++i) {
      uint32_t u;
      std::memcpy(&u, p + 4 * i, 4);
      if ((u & 0x7f800000u) == 0x7f800000u) return i;
    }
    return n;
  }
  const uint16_t exp = t == StDType::F16 ? 0x7c00u : 0x7f80u;
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    if ((h & exp) == exp) return i;
  }
  return n;
}

}  // namespace

WeightStore::WeightStore(Context& ctx, const std::string& path)
    : ctx_(ctx), file_(std::make_shared<const SafetensorsFile>(path)) {}

WeightStore::WeightStore(Context& ctx, SafetensorsFile file)
    : ctx_(ctx), file_(std::make_shared<const SafetensorsFile>(std::move(file))) {}

const StTensorInfo& WeightStore::host_tensor(const std::string& name, const Shape& expected,
                                             const std::string& expected_from) {
  const StTensorInfo& t = checked(name, expected, DType::F32, expected_from);
  loaded_.insert(name);
  return t;
}

void WeightStore::fail(const std::string& name, const std::string& what) const {
  throw Error(file_->path() + ": tensor " + name + " " + what);
}

Shape WeightStore::shape(const std::string& name) const {
  const StTensorInfo& t = file_->info(name);
  if (t.shape.size() > static_cast<size_t>(kMaxRank))
    fail(name, "has shape " + t.shape_str() + ", more than " + std::to_string(kMaxRank) + " dimensions");
  Shape s;
  for (int64_t d : t.shape) s.dims[static_cast<size_t>(s.rank++)] = d;
  return s;
}

const StTensorInfo& WeightStore::checked(const std::string& name, const Shape& expected, DType device_dtype,
                                         const std::string& expected_from) const {
  if (!file_->has(name))
    fail(name,
         "is missing" +
             (expected_from.empty() ? std::string() : " (expected " + expected.str() + " from " + expected_from + ")"));
  const StTensorInfo& t = file_->info(name);
  bool same = t.shape.size() == static_cast<size_t>(expected.rank);
  for (int i = 0; same && i < expected.rank; ++i) same = t.shape[static_cast<size_t>(i)] == expected[i];
  if (!same)
    fail(name, "has shape " + t.shape_str() + ", expected " + expected.str() +
                   (expected_from.empty() ? std::string() : " from " + expected_from));

  const bool to_float = device_dtype == DType::F32 || device_dtype == DType::F16;
  if (!(to_float && is_float(t.dtype)) && !(device_dtype == DType::I32 && t.dtype == StDType::I32))
    fail(name, std::string("is ") + st_dtype_name(t.dtype) + " and cannot be loaded as " + dtype_name(device_dtype) +
                   " (F32/F16/BF16 load as f32 or f16, I32 as i32)");
  const size_t n = static_cast<size_t>(t.numel);
  if (is_float(t.dtype))
    if (const size_t bad = first_non_finite(t.dtype, file_->data(name), n); bad < n)
      fail(name, "element " + std::to_string(bad) + " is NaN or Inf (corrupt or badly converted file?)");
  return t;
}

template <typename Value>
Tensor WeightStore::upload_converted(const std::string& name, const Shape& shape, DType device_dtype, size_t n,
                                     const std::string& tensor_name, Value value) {
  Tensor out = ctx_.tensor(device_dtype, shape, tensor_name);
  if (device_dtype == DType::F32) {
    std::vector<float> buf(n);
    for (size_t i = 0; i < n; ++i) buf[i] = value(i);
    ctx_.upload(out, buf.data(), buf.size() * 4);
  } else {
    std::vector<uint16_t> buf(n);
    for (size_t i = 0; i < n; ++i) {
      const float f = value(i);
      buf[i] = float_to_half(f);
      // bf16 and f32 reach far past f16's 65504 (non-finite inputs were rejected); a silent inf
      // would poison every later layer.
      if ((buf[i] & 0x7c00u) == 0x7c00u)
        fail(name, "element " + std::to_string(i) + " = " + std::to_string(f) + " overflows f16");
    }
    ctx_.upload(out, buf.data(), buf.size() * 2);
  }
  uploaded_bytes_ += out.bytes();
  return out;
}

Tensor WeightStore::load(const std::string& name, const Shape& expected, DType device_dtype,
                         const std::string& expected_from) {
  const StTensorInfo& t = checked(name, expected, device_dtype, expected_from);
  const uint8_t* src = file_->data(name);
  const size_t n = static_cast<size_t>(t.numel);
  const bool verbatim = (t.dtype == StDType::F32 && device_dtype == DType::F32) ||
                        (t.dtype == StDType::F16 && device_dtype == DType::F16) || t.dtype == StDType::I32;
  Tensor out;
  if (verbatim) {
    out = ctx_.tensor(device_dtype, expected, name);
    ctx_.upload(out, src, t.bytes());
    uploaded_bytes_ += out.bytes();
  } else {
    out =
        upload_converted(name, expected, device_dtype, n, name, [&](size_t i) { return load_float(t.dtype, src, i); });
  }
  loaded_.insert(name);
  return out;
}

Tensor WeightStore::load_columns(const std::string& name, const Shape& expected, int64_t first_col, int64_t n_cols,
                                 DType device_dtype, const std::string& tensor_name, const std::string& expected_from) {
  if (expected.rank != 2 || first_col < 0 || n_cols < 1 || first_col + n_cols > expected[1])
    fail(name, "columns [" + std::to_string(first_col) + ", " + std::to_string(first_col + n_cols) +
                   ") asked of a tensor expected as " + expected.str());
  if (device_dtype != DType::F32 && device_dtype != DType::F16)
    fail(name, std::string("cannot be loaded in column parts as ") + dtype_name(device_dtype) + " (f32 or f16)");
  const StTensorInfo& t = checked(name, expected, device_dtype, expected_from);
  const uint8_t* src = file_->data(name);
  const uint64_t cols = static_cast<uint64_t>(expected[1]), part = static_cast<uint64_t>(n_cols);
  Tensor out = upload_converted(name, {expected[0], n_cols}, device_dtype, static_cast<size_t>(expected[0] * n_cols),
                                tensor_name, [&](size_t i) {
                                  return load_float(t.dtype, src,
                                                    (i / part) * cols + static_cast<uint64_t>(first_col) + i % part);
                                });
  loaded_.insert(name);
  return out;
}

std::vector<std::string> WeightStore::unused() const {
  std::vector<std::string> out;
  for (const std::string& n : file_->tensor_names())
    if (!loaded_.count(n)) out.push_back(n);
  return out;
}

void require_kind(const SafetensorsFile& f, const std::string& path, const std::string& kind, const std::string& what) {
  if (!f.has_meta("vkspec.kind") || f.meta("vkspec.kind") != kind)
    throw Error(path + ": not " + what + " (metadata vkspec.kind != " + kind + ")");
}

void require_meta_values(const SafetensorsFile& f, const std::string& path, const MetaValue* values, size_t count) {
  for (const MetaValue* e = values; e != values + count; ++e)
    if (!f.has_meta(e->key) || f.meta(e->key) != e->value)
      throw Error(path + ": metadata " + e->key + " = '" + (f.has_meta(e->key) ? f.meta(e->key) : std::string()) +
                  "', the engine implements '" + e->value + "'");
}

}  // namespace vkspec
