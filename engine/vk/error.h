#pragma once
// Errors thrown by the engine. Every message says what failed and where (file, tensor, device).
#include <stdexcept>
#include <string>

#include <volk.h>

namespace vkspec {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A Vulkan call failed; result() keeps the VkResult for callers that recover (viewer restarts).
class VulkanError : public Error {
 public:
  VulkanError(VkResult result, const std::string& what);
  VkResult result() const { return result_; }

 private:
  VkResult result_;
};

// The device budget (real or the VKSPEC_MAX_DEVICE_MEMORY cap) cannot hold an allocation.
class OutOfDeviceMemory : public Error {
 public:
  using Error::Error;
};

const char* vk_result_name(VkResult r);

// Throws VulkanError naming the call when r is not VK_SUCCESS.
inline void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw VulkanError(r, what);
}

}  // namespace vkspec
