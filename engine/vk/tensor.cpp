#include "engine/vk/tensor.h"

#include <cstring>
#include <sstream>

#include "engine/vk/vulkan_error.h"

namespace vkspec {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::I32: return 4;
    case DType::U32: return 4;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::I32: return "i32";
    case DType::U32: return "u32";
  }
  return "?";
}

Shape::Shape(std::initializer_list<int64_t> d) {
  if (d.size() > kMaxRank) throw Error("tensor rank " + std::to_string(d.size()) + " exceeds 4");
  for (int64_t v : d) {
    if (v < 0) throw Error("negative tensor dimension");
    dims[static_cast<size_t>(rank++)] = v;
  }
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[static_cast<size_t>(i)] != o.dims[static_cast<size_t>(i)]) return false;
  return true;
}

std::string Shape::str() const {
  std::ostringstream s;
  s << '[';
  for (int i = 0; i < rank; ++i) s << (i ? ", " : "") << dims[static_cast<size_t>(i)];
  s << ']';
  return s.str();
}

TensorView TensorView::rows(int64_t first, int64_t count) const {
  if (shape.rank == 0) throw Error("rows() of a scalar view");
  if (first < 0 || count < 0 || first + count > shape[0])
    throw Error("rows [" + std::to_string(first) + ", " + std::to_string(first + count) + ") outside " + shape.str());
  const int64_t row_elems = shape[0] ? numel() / shape[0] : 0;
  TensorView v = *this;
  v.shape.dims[0] = count;
  v.offset = offset + static_cast<VkDeviceSize>(first * row_elems) * dtype_size(dtype);
  v.bytes = static_cast<VkDeviceSize>(count * row_elems) * dtype_size(dtype);
  return v;
}

TensorView TensorView::reshape(Shape s) const {
  if (s.numel() != numel()) throw Error("reshape " + shape.str() + " -> " + s.str() + " changes the size");
  TensorView v = *this;
  v.shape = s;
  return v;
}

Tensor::Tensor(Buffer buffer, DType dtype, Shape shape, std::string name)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(shape), name_(std::move(name)) {}

TensorView Tensor::view() const {
  TensorView v;
  v.buffer = buffer_.handle();
  v.offset = buffer_.offset();
  v.bytes = bytes();
  v.dtype = dtype_;
  v.shape = shape_;
  v.texels = buffer_.texels();
  return v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf / nan
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // underflow -> zero
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace vkspec
