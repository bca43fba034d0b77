#include "engine/vk/buffer.h"

#include <algorithm>

#include "engine/vk/vulkan_error.h"

namespace vkspec {
namespace {

constexpr VkDeviceSize kBlockSize = 64ull << 20;

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

const char* usage_name(MemoryUsage u) {
  switch (u) {
    case MemoryUsage::Device: return "device";
    case MemoryUsage::Upload: return "upload";
    case MemoryUsage::Readback: return "readback";
  }
  return "?";
}

}  // namespace

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    allocator_ = o.allocator_;
    block_ = o.block_;
    handle_ = o.handle_;
    offset_ = o.offset_;
    size_ = o.size_;
    reserved_ = o.reserved_;
    mapped_ = o.mapped_;
    texels_ = o.texels_;
    o.allocator_ = nullptr;
    o.handle_ = VK_NULL_HANDLE;
    o.mapped_ = nullptr;
    o.texels_ = {};
  }
  return *this;
}

void Buffer::release() {
  if (allocator_) allocator_->free(*this);
  allocator_ = nullptr;
  handle_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  texels_ = {};
}

Allocator::Allocator(VkPhysicalDevice pd, VkDevice device, VkDeviceSize alignment, uint64_t device_cap,
                     uint64_t max_texel_elements, VkDeviceSize texel_alignment)
    : physical_(pd),
      device_(device),
      alignment_(std::max<VkDeviceSize>(alignment, 16)),
      cap_(device_cap),
      max_texel_elements_(max_texel_elements),
      texel_alignment_(std::max<VkDeviceSize>(texel_alignment, 1)) {
  vkGetPhysicalDeviceMemoryProperties(pd, &props_);
}

Allocator::~Allocator() {
  for (auto& b : blocks_) destroy_block(b);
}

uint32_t Allocator::memory_type(MemoryUsage usage, uint32_t type_bits) const {
  // Ordered preferences; the first type that matches wins.
  const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags HC = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  std::vector<VkMemoryPropertyFlags> wants;
  switch (usage) {
    case MemoryUsage::Device: wants = {DL, 0}; break;
    case MemoryUsage::Upload: wants = {HV}; break;
    case MemoryUsage::Readback: wants = {HV | HC, HV}; break;
  }
  for (VkMemoryPropertyFlags want : wants)
    for (uint32_t i = 0; i < props_.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (props_.memoryTypes[i].propertyFlags & want) == want) return i;
  throw Error(std::string("no Vulkan memory type fits ") + usage_name(usage) + " buffers");
}

size_t Allocator::create_block(VkDeviceSize size, MemoryUsage usage, bool dedicated, const std::string& what) {
  if (usage == MemoryUsage::Device && cap_) {
    uint64_t reserved = 0;
    for (const auto& b : blocks_)
      if (b.memory && b.usage == MemoryUsage::Device) reserved += b.size;
    if (reserved + size > cap_)
      throw OutOfDeviceMemory("out of device memory allocating " + std::to_string(size >> 20) + " MiB for " + what +
                              ": the cap VKSPEC_MAX_DEVICE_MEMORY=" + std::to_string(cap_) +
                              " bytes would be exceeded (" + std::to_string(reserved >> 20) + " MiB in use)");
  }
  Block b;
  b.size = size;
  b.usage = usage;
  b.dedicated = dedicated;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
      (max_texel_elements_ ? VkBufferUsageFlags{VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT} : VkBufferUsageFlags{0});
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vkCreateBuffer(device_, &bi, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  try {
    ai.memoryTypeIndex = memory_type(usage, req.memoryTypeBits);
  } catch (...) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    throw;
  }
  VkResult r = vkAllocateMemory(device_, &ai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw OutOfDeviceMemory(std::string("out of ") + (r == VK_ERROR_OUT_OF_HOST_MEMORY ? "host" : "device") +
                              " memory allocating " + std::to_string(size >> 20) + " MiB for " + what);
    throw VulkanError(r, "vkAllocateMemory for " + what);
  }
  try {
    vk_check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
  } catch (...) {
    destroy_block(b);
    throw;
  }
  // Only coherent memory is mapped, so host writes and reads need no flush or invalidate.
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if ((props_.memoryTypes[ai.memoryTypeIndex].propertyFlags & hv) == hv) {
    void* p = nullptr;
    vk_check(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
    b.mapped = static_cast<uint8_t*>(p);
  }
  b.free[0] = size;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (!blocks_[i].memory) {  // reuse a slot of a destroyed block
      blocks_[i] = std::move(b);
      return i;
    }
  }
  blocks_.push_back(std::move(b));
  return blocks_.size() - 1;
}

void Allocator::destroy_block(Block& b) {
  if (b.mapped) vkUnmapMemory(device_, b.memory);
  if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device_, b.memory, nullptr);
  b = Block{};
}

Buffer Allocator::allocate(VkDeviceSize bytes, MemoryUsage usage, const std::string& what) {
  Buffer out = take_range(bytes, usage, what);
  // Outside the lock: if this throws, out's destructor gives the range back (which locks).
  if (usage == MemoryUsage::Device) out.texels_ = make_texel_view(out.handle_, out.offset_, out.size_);
  return out;
}

Buffer Allocator::take_range(VkDeviceSize bytes, MemoryUsage usage, const std::string& what) {
  if (bytes == 0) bytes = 4;
  const VkDeviceSize need = align_up(bytes, alignment_);
  std::lock_guard<std::mutex> lock(mutex_);
  auto take = [&](size_t bi) -> Buffer {
    Block& b = blocks_[bi];
    for (auto it = b.free.begin(); it != b.free.end(); ++it) {
      if (it->second < need) continue;
      Buffer out;
      out.allocator_ = this;
      out.block_ = bi;
      out.handle_ = b.buffer;
      out.offset_ = it->first;
      out.size_ = bytes;
      out.reserved_ = need;
      out.mapped_ = b.mapped ? b.mapped + it->first : nullptr;
      const VkDeviceSize rest = it->second - need, at = it->first + need;
      b.free.erase(it);
      if (rest) b.free[at] = rest;
      ++b.live;
      return out;
    }
    return Buffer{};
  };
  const bool dedicated = need > kBlockSize / 2;
  if (!dedicated) {
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (!blocks_[i].memory || blocks_[i].usage != usage || blocks_[i].dedicated) continue;
      Buffer b = take(i);
      if (b.valid()) return b;
    }
  }
  const size_t bi = create_block(dedicated ? need : kBlockSize, usage, dedicated, what);
  return take(bi);
}

TexelView Allocator::make_texel_view(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes) const {
  TexelView t;
  const VkDeviceSize texels = std::min<VkDeviceSize>(bytes / 16, max_texel_elements_);
  if (!texels || offset % texel_alignment_) return t;
  VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  vi.buffer = buffer;
  vi.format = VK_FORMAT_R32G32B32A32_UINT;  // a uniform-texel-buffer format every device supports
  vi.offset = offset;
  vi.range = texels * 16;
  vk_check(vkCreateBufferView(device_, &vi, nullptr, &t.view), "vkCreateBufferView");
  t.begin = offset;
  t.bytes = vi.range;
  return t;
}

void Allocator::free(Buffer& buf) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (buf.texels_.view) vkDestroyBufferView(device_, buf.texels_.view, nullptr);
  Block& b = blocks_[buf.block_];
  auto it = b.free.emplace(buf.offset_, buf.reserved_).first;
  // Coalesce with the following and preceding free ranges.
  auto next = std::next(it);
  if (next != b.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b.free.erase(next);
  }
  if (it != b.free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b.free.erase(it);
    }
  }
  if (--b.live == 0 && b.dedicated) destroy_block(b);
}

AllocatorStats Allocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  AllocatorStats s;
  for (const auto& b : blocks_) {
    if (!b.memory) continue;
    ++s.blocks;
    s.live_buffers += b.live;
    VkDeviceSize free_bytes = 0;
    for (const auto& f : b.free) free_bytes += f.second;
    if (b.usage == MemoryUsage::Device) {
      s.device_bytes_reserved += b.size;
      s.device_bytes_in_use += b.size - free_bytes;
    } else {
      s.host_bytes_reserved += b.size;
    }
  }
  return s;
}

}  // namespace vkspec
