#pragma once
// Typed device arrays. A Tensor owns its Buffer; a TensorView is a cheap non-owning window
// (buffer range + dtype + shape) that ops and command streams take.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "engine/vk/buffer.h"

namespace vkspec {

enum class DType : uint8_t { F32, F16, I32, U32 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);

constexpr int kMaxRank = 4;

struct Shape {
  std::array<int64_t, kMaxRank> dims{};
  int rank = 0;

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
  int64_t numel() const;
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[2, 3]"
};

struct TensorView {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;  // bytes from the start of buffer
  VkDeviceSize bytes = 0;
  DType dtype = DType::F32;
  Shape shape;
  // The texel view of the Tensor this views (rows() and reshape() keep it): texel i is bytes
  // [texels.begin + 16 i, + 16) of buffer.
  TexelView texels;

  int64_t numel() const { return shape.numel(); }
  // Rows [first, first + count) of a tensor viewed as [rows, ...]; the row size is the product of
  // the other dims. The offset must stay aligned for storage bindings (checked by the stream).
  TensorView rows(int64_t first, int64_t count) const;
  // Same bytes with another shape of equal element count.
  TensorView reshape(Shape s) const;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(Buffer buffer, DType dtype, Shape shape, std::string name);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  bool valid() const { return buffer_.valid(); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  const std::string& name() const { return name_; }
  const Buffer& buffer() const { return buffer_; }
  void* mapped() const { return buffer_.mapped(); }
  TensorView view() const;
  operator TensorView() const { return view(); }

 private:
  Buffer buffer_;
  DType dtype_ = DType::F32;
  Shape shape_;
  std::string name_;
};

// IEEE half conversions used by uploads, the CPU reference and tests (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace vkspec
