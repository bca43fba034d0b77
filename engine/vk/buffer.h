#pragma once
// Device memory: a few large VkDeviceMemory blocks, each with one VkBuffer over all of it, carved
// into Buffers (offset ranges) by a first-fit free list. A Buffer is a move-only RAII handle.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <volk.h>

namespace vkspec {

enum class MemoryUsage {
  Device,    // device-local; weights, activations, KV caches
  Upload,    // host-visible, written by the CPU
  Readback,  // host-visible (cached where possible), read by the CPU
};

class Allocator;

// A Buffer seen as 16-byte texels (R32G32B32A32_UINT), bound as a uniform texel buffer by
// kernels that stream weights: on CPU implementations a texel fetch is a vector gather, where a
// storage-buffer load is a per-lane loop (docs/perf.md). The view covers exactly its Buffer's
// whole 16-byte texels, starting at byte `begin` of the VkBuffer, so what a descriptor exposes
// (and what synchronization validation tracks) is that Buffer and no neighbour in the block.
// {VK_NULL_HANDLE, ...} where the buffer has none (host-visible buffers, a device without texel
// buffers, an offset the device cannot start a view at).
struct TexelView {
  VkBufferView view = VK_NULL_HANDLE;
  VkDeviceSize begin = 0, bytes = 0;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  bool valid() const { return allocator_ != nullptr; }
  VkBuffer handle() const { return handle_; }
  VkDeviceSize offset() const { return offset_; }
  VkDeviceSize size() const { return size_; }
  // This buffer's texel view (made with it, destroyed with it).
  const TexelView& texels() const { return texels_; }
  // Host pointer to the first byte, or nullptr when the memory is not host-visible.
  void* mapped() const { return mapped_; }
  void release();

 private:
  friend class Allocator;
  Allocator* allocator_ = nullptr;
  size_t block_ = 0;
  VkBuffer handle_ = VK_NULL_HANDLE;
  VkDeviceSize offset_ = 0, size_ = 0, reserved_ = 0;
  void* mapped_ = nullptr;
  TexelView texels_;
};

struct AllocatorStats {
  uint64_t device_bytes_reserved = 0;  // VkDeviceMemory held for MemoryUsage::Device
  uint64_t device_bytes_in_use = 0;    // of which handed out as Buffers
  uint64_t host_bytes_reserved = 0;
  uint32_t blocks = 0;
  uint32_t live_buffers = 0;
};

class Allocator {
 public:
  // device_cap: 0 = no cap; otherwise Device allocations beyond it throw OutOfDeviceMemory
  // (used to test out-of-memory handling on devices that have plenty).
  // max_texel_elements: maxTexelBufferElements (0: no texel views); texel_alignment:
  // minTexelBufferOffsetAlignment.
  Allocator(VkPhysicalDevice pd, VkDevice device, VkDeviceSize alignment, uint64_t device_cap,
            uint64_t max_texel_elements, VkDeviceSize texel_alignment);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // what: a name for error messages ("layers.3.attention.wqkv.weight", "kv cache").
  Buffer allocate(VkDeviceSize bytes, MemoryUsage usage, const std::string& what);
  AllocatorStats stats() const;

 private:
  friend class Buffer;
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    MemoryUsage usage = MemoryUsage::Device;
    bool dedicated = false;
    uint8_t* mapped = nullptr;
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size, coalesced
    uint32_t live = 0;
  };
  void free(Buffer& b);
  Buffer take_range(VkDeviceSize bytes, MemoryUsage usage, const std::string& what);
  TexelView make_texel_view(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes) const;
  size_t create_block(VkDeviceSize size, MemoryUsage usage, bool dedicated, const std::string& what);
  void destroy_block(Block& b);
  uint32_t memory_type(MemoryUsage usage, uint32_t type_bits) const;

  VkPhysicalDevice physical_;
  VkDevice device_;
  VkDeviceSize alignment_;
  uint64_t cap_;
  uint64_t max_texel_elements_;
  VkDeviceSize texel_alignment_;
  VkPhysicalDeviceMemoryProperties props_{};
  mutable std::mutex mutex_;
  std::vector<Block> blocks_;
};

}  // namespace vkspec
