#pragma once
// The errors every layer throws and catches (engine, decoding, eval, front ends). Every message
// says what failed and where (file, tensor, device, method, option). Vulkan's own failures
// (VulkanError, with the VkResult) derive from Error in engine/vk/vulkan_error.h.
#include <stdexcept>
#include <string>

namespace vkspec {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device budget (real or the VKSPEC_MAX_DEVICE_MEMORY cap) cannot hold an allocation.
class OutOfDeviceMemory : public Error {
 public:
  using Error::Error;
};

}  // namespace vkspec
