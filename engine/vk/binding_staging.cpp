#include "engine/vk/binding_staging.h"

#include <algorithm>

#include "engine/vk/context.h"

namespace vkspec {
namespace {

constexpr VkDeviceSize kBlockBytes = 8ull << 20;  // a forward's staged views fit in one

VkDeviceSize round_up(VkDeviceSize v, VkDeviceSize to) { return (v + to - 1) / to * to; }

}  // namespace

BindingStaging::BindingStaging(Context& ctx, VkDeviceSize alignment)
    : ctx_(ctx), alignment_(std::max<VkDeviceSize>(alignment, 16)) {}

TensorView BindingStaging::take(const TensorView& like) {
  const VkDeviceSize need = round_up(std::max<VkDeviceSize>(like.bytes, 4), 16);
  for (;; ++block_, used_ = 0) {
    if (block_ == blocks_.size()) {
      const VkDeviceSize bytes = std::max(kBlockBytes, round_up(need, alignment_));
      blocks_.push_back(ctx_.tensor(DType::U32, {static_cast<int64_t>(bytes / 4)}, "binding staging"));
    }
    const TensorView whole = blocks_[block_].view();
    const VkDeviceSize at = round_up(used_, alignment_);
    if (at + need > whole.bytes) continue;
    used_ = at + need;
    TensorView v;
    v.buffer = whole.buffer;
    v.offset = whole.offset + at;
    v.bytes = like.bytes;
    v.dtype = like.dtype;
    v.shape = like.shape;
    return v;
  }
}

void BindingStaging::reset() {
  block_ = 0;
  used_ = 0;
}

}  // namespace vkspec
