#include "engine/vk/descriptor_arena.h"

#include "engine/vk/vulkan_error.h"

namespace vkspec {
namespace {

// One pool holds the sets of a few hundred dispatches: a forward of the shipped model records
// about 150, and the widest kernel binds 9 buffers, 2 of them texel buffers.
constexpr uint32_t kSetsPerPool = 512;
constexpr uint32_t kStorageBuffersPerPool = kSetsPerPool * 10;
constexpr uint32_t kTexelBuffersPerPool = kSetsPerPool * 4;

}  // namespace

DescriptorArena::DescriptorArena(VkDevice device) : device_(device) {}

DescriptorArena::~DescriptorArena() {
  for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(device_, p, nullptr);
}

VkDescriptorPool DescriptorArena::make_pool() {
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kStorageBuffersPerPool},
                                        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kTexelBuffersPerPool}};
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.maxSets = kSetsPerPool;
  ci.poolSizeCount = 2;
  ci.pPoolSizes = sizes;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk_check(vkCreateDescriptorPool(device_, &ci, nullptr, &pool), "vkCreateDescriptorPool");
  pools_.push_back(pool);
  return pool;
}

VkDescriptorSet DescriptorArena::allocate(VkDescriptorSetLayout layout) {
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  // A full pool answers OUT_OF_POOL_MEMORY (or FRAGMENTED_POOL); the next one, fresh or reset,
  // always has room for one set.
  for (;;) {
    const bool fresh = current_ == pools_.size();
    ai.descriptorPool = fresh ? make_pool() : pools_[current_];
    const VkResult r = vkAllocateDescriptorSets(device_, &ai, &set);
    if (r == VK_SUCCESS) return set;
    const bool full = r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL;
    if (fresh || !full) vk_check(r, "vkAllocateDescriptorSets");
    ++current_;
  }
}

void DescriptorArena::reset() {
  for (size_t i = 0; i <= current_ && i < pools_.size(); ++i)
    vk_check(vkResetDescriptorPool(device_, pools_[i], 0), "vkResetDescriptorPool");
  current_ = 0;
}

}  // namespace vkspec
