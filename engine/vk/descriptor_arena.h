#pragma once
// Descriptor sets for devices without VK_KHR_push_descriptor (SwiftShader, some mobile and older
// GPUs). A CommandStream owns one arena: each dispatch takes a fresh set from the current pool,
// and once the stream's fence has signalled every set it handed out is recycled at once by
// resetting the pools, so nothing is allocated or freed per dispatch after the first batches have
// grown the arena to the stream's size.
#include <cstdint>
#include <vector>

#include <volk.h>

namespace vkspec {

class DescriptorArena {
 public:
  explicit DescriptorArena(VkDevice device);
  ~DescriptorArena();
  DescriptorArena(const DescriptorArena&) = delete;
  DescriptorArena& operator=(const DescriptorArena&) = delete;

  // A set of the given layout, valid until reset(); grows the arena by a pool when the current
  // ones are full.
  VkDescriptorSet allocate(VkDescriptorSetLayout layout);
  // Every set handed out becomes free: call only once the GPU has finished the commands using them.
  void reset();
  size_t pool_count() const { return pools_.size(); }

 private:
  VkDescriptorPool make_pool();

  VkDevice device_;
  std::vector<VkDescriptorPool> pools_;
  size_t current_ = 0;  // pools_[current_] is where the next set comes from
};

}  // namespace vkspec
