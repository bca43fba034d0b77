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

WeightStore::WeightStore(Context& ctx, const std::string& path) : ctx_(ctx), file_(path) {}

WeightStore::WeightStore(Context& ctx, SafetensorsFile file) : ctx_(ctx), file_(std::move(file)) {}

void WeightStore::fail(const std::string& name, const std::string& what) const {
  throw Error(file_.path() + ": tensor " + name + " " + what);
}

Shape WeightStore::shape(const std::string& name) const {
  const StTensorInfo& t = file_.info(name);
  if (t.shape.size() > static_cast<size_t>(kMaxRank))
    fail(name, "has shape " + t.shape_str() + ", more than " + std::to_string(kMaxRank) + " dimensions");
  Shape s;
  for (int64_t d : t.shape) s.dims[static_cast<size_t>(s.rank++)] = d;
  return s;
}

Tensor WeightStore::load(const std::string& name, const Shape& expected, DType device_dtype,
                         const std::string& expected_from) {
  if (!file_.has(name))
    fail(name, "is missing" + (expected_from.empty() ? std::string() : " (expected " + expected.str() + " from " +
                                                                           expected_from + ")"));
  const StTensorInfo& t = file_.info(name);
  bool same = t.shape.size() == static_cast<size_t>(expected.rank);
  for (int i = 0; same && i < expected.rank; ++i) same = t.shape[static_cast<size_t>(i)] == expected[i];
  if (!same)
    fail(name, "has shape " + t.shape_str() + ", expected " + expected.str() +
                   (expected_from.empty() ? std::string() : " from " + expected_from));

  const bool to_float = device_dtype == DType::F32 || device_dtype == DType::F16;
  if (!(to_float && is_float(t.dtype)) && !(device_dtype == DType::I32 && t.dtype == StDType::I32))
    fail(name, std::string("is ") + st_dtype_name(t.dtype) + " and cannot be loaded as " + dtype_name(device_dtype) +
                   " (F32/F16/BF16 load as f32 or f16, I32 as i32)");

  Tensor out = ctx_.tensor(device_dtype, expected, name);
  const uint8_t* src = file_.data(name);
  const size_t n = static_cast<size_t>(t.numel);
  if (is_float(t.dtype))
    if (const size_t bad = first_non_finite(t.dtype, src, n); bad < n)
      fail(name, "element " + std::to_string(bad) + " is NaN or Inf (corrupt or badly converted file?)");
  const bool verbatim = (t.dtype == StDType::F32 && device_dtype == DType::F32) ||
                        (t.dtype == StDType::F16 && device_dtype == DType::F16) || t.dtype == StDType::I32;
  if (verbatim) {
    ctx_.upload(out, src, t.bytes());
  } else if (device_dtype == DType::F32) {
    std::vector<float> buf(n);
    for (size_t i = 0; i < n; ++i) buf[i] = load_float(t.dtype, src, i);
    ctx_.upload(out, buf.data(), buf.size() * 4);
  } else {
    std::vector<uint16_t> buf(n);
    for (size_t i = 0; i < n; ++i) {
      const float f = load_float(t.dtype, src, i);
      buf[i] = float_to_half(f);
      // bf16 and f32 reach far past f16's 65504 (non-finite inputs were rejected above); a silent
      // inf would poison every later layer.
      if ((buf[i] & 0x7c00u) == 0x7c00u)
        fail(name, "element " + std::to_string(i) + " = " + std::to_string(f) + " overflows f16");
    }
    ctx_.upload(out, buf.data(), buf.size() * 2);
  }
  loaded_.insert(name);
  uploaded_bytes_ += out.bytes();
  return out;
}

std::vector<std::string> WeightStore::unused() const {
  std::vector<std::string> out;
  for (const std::string& n : file_.tensor_names())
    if (!loaded_.count(n)) out.push_back(n);
  return out;
}

}  // namespace vkspec
