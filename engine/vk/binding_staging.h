#pragma once
// Ranges for storage bindings whose offsets the device cannot bind. Ops bind row views of larger
// tensors (a window's rows, one layer's cache, a mask's metadata) at any 16-byte offset; a device
// whose minStorageBufferOffsetAlignment is larger (SwiftShader's 256, many mobile GPUs' 64) cannot
// bind them there. The CommandStream then copies such a view into a range taken from here, binds
// that, and copies it back if the shader writes it: correct on every device, paid only where the
// alignment requires it. Ranges are handed out in order from blocks kept for the stream's life and
// all become free at once when its batch has finished.
#include <vector>

#include "engine/vk/tensor.h"

namespace vkspec {

class Context;

class BindingStaging {
 public:
  BindingStaging(Context& ctx, VkDeviceSize alignment);

  // A range of like.bytes (its dtype and shape too) on a binding-aligned offset, with room for the
  // 16-byte rounding the stream gives storage ranges; valid until reset().
  TensorView take(const TensorView& like);
  // Every range becomes free: call only once the GPU has finished the commands using them.
  void reset();

 private:
  Context& ctx_;
  VkDeviceSize alignment_;
  std::vector<Tensor> blocks_;
  size_t block_ = 0;       // blocks_[block_] is where the next range comes from
  VkDeviceSize used_ = 0;  // bytes of it taken
};

}  // namespace vkspec
