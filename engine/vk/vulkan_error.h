#pragma once
// Vulkan's failures as errors: VulkanError keeps the VkResult; the plain Error and
// OutOfDeviceMemory live in common/error.h, which every layer may include.
#include <string>

#include <volk.h>

#include "common/error.h"

namespace vkspec {

// A Vulkan call failed; result() keeps the VkResult for callers that recover (viewer restarts).
class VulkanError : public Error {
 public:
  VulkanError(VkResult result, const std::string& what);
  VkResult result() const { return result_; }

 private:
  VkResult result_;
};

const char* vk_result_name(VkResult r);

// Throws VulkanError naming the call when r is not VK_SUCCESS.
inline void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw VulkanError(r, what);
}

}  // namespace vkspec
