#pragma once
// The Vulkan instance: loader (volk), optional Khronos validation with a debug messenger that
// records every warning and error so tests can fail on them.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <volk.h>

#include "engine/vk/device_caps.h"

namespace vkspec {

struct InstanceOptions {
  // Khronos validation layer + debug messenger. Default: VKSPEC_VALIDATION (and for the next two
  // VKSPEC_SYNC_VALIDATION, VKSPEC_VALIDATION_PRINT).
  bool validation = false;
  // Also run synchronization validation (catches missing barriers; slower).
  bool sync_validation = false;
  // Print every validation message to stderr as it arrives (VKSPEC_VALIDATION_PRINT).
  bool print_validation = false;
  // Extra instance extensions, e.g. the window system's surface extensions for the viewer.
  std::vector<std::string> extensions;
  static InstanceOptions from_environment();
};

// Messages the validation layer reported, kept for inspection.
class ValidationLog {
 public:
  // print: also write each message to stderr as it is added.
  void print_as_added(bool print) { print_ = print; }
  void add(std::string message);
  std::vector<std::string> take();  // returns and clears
  size_t count() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  bool print_ = false;
};

class Instance {
 public:
  // log: where the validation messages go (null: a log of this instance's own). Instances that
  // share one report into it, so a test's check sees every instance it made.
  explicit Instance(const InstanceOptions& options = InstanceOptions::from_environment(),
                    std::shared_ptr<ValidationLog> log = nullptr);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }
  const InstanceOptions& options() const { return options_; }
  ValidationLog& validation_log() { return *log_; }
  const std::shared_ptr<ValidationLog>& shared_validation_log() const { return log_; }

  const std::vector<VkPhysicalDevice>& physical_devices() const { return physical_; }
  const std::vector<DeviceCaps>& devices() const { return caps_; }
  // Index chosen by VKSPEC_DEVICE when set, else discrete > integrated > virtual > cpu.
  uint32_t preferred_device() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  InstanceOptions options_;
  std::shared_ptr<ValidationLog> log_;
  std::vector<VkPhysicalDevice> physical_;
  std::vector<DeviceCaps> caps_;
};

}  // namespace vkspec
