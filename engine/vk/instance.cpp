#include "engine/vk/instance.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "common/env.h"
#include "engine/vk/cache_file.h"
#include "engine/vk/mesa_shader_cache.h"
#include "engine/vk/vulkan_error.h"

namespace vkspec {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  std::string msg =
      (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "validation error: " : "validation warning: ";
  msg += data->pMessage ? data->pMessage : "(no text)";
  static_cast<ValidationLog*>(user)->add(msg);
  return VK_FALSE;
}

bool layer_present(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

}  // namespace

InstanceOptions InstanceOptions::from_environment() {
  InstanceOptions o;
  o.validation = env::flag(env::kValidation);
  o.sync_validation = env::flag(env::kSyncValidation);
  o.print_validation = env::flag(env::kValidationPrint);
  return o;
}

void ValidationLog::add(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (print_) std::cerr << message << "\n";
  messages_.push_back(std::move(message));
}

std::vector<std::string> ValidationLog::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  out.swap(messages_);
  return out;
}

size_t ValidationLog::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_.size();
}

Instance::Instance(const InstanceOptions& options, std::shared_ptr<ValidationLog> log)
    : options_(options), log_(log ? std::move(log) : std::make_shared<ValidationLog>()) {
  keep_forced_width_shader_cache_apart(cache_dir_from_environment());  // before the driver loads
  if (volkInitialize() != VK_SUCCESS)
    throw Error("no Vulkan loader found (libvulkan.so.1); install libvulkan1 and a driver such as "
                "mesa-vulkan-drivers");
  if (volkGetInstanceVersion() < VK_API_VERSION_1_2)
    throw Error("the Vulkan loader supports only Vulkan < 1.2; vkspec needs 1.2");

  validation_ = options.validation;
  log_->print_as_added(options.print_validation);
  const char* layer = "VK_LAYER_KHRONOS_validation";
  if (validation_ && !layer_present(layer))
    throw Error("validation requested but VK_LAYER_KHRONOS_validation is not installed "
                "(apt-get install vulkan-validationlayers)");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkspec";
  app.pEngineName = "vkspec";
  app.apiVersion = VK_API_VERSION_1_2;

  std::vector<const char*> exts;
  std::vector<const char*> layers;
  if (validation_) {
    exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    layers.push_back(layer);
  }
  for (const std::string& e : options.extensions)
    if (std::none_of(exts.begin(), exts.end(), [&](const char* x) { return e == x; })) exts.push_back(e.c_str());

  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = on_debug_message;
  dbg.pUserData = log_.get();

  VkValidationFeatureEnableEXT sync_feature = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_feature;

  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  if (validation_) {
    // The messenger in pNext also reports problems inside vkCreateInstance itself.
    ci.pNext = &dbg;
    if (options.sync_validation) dbg.pNext = &features;
  }
  if (const VkResult r = vkCreateInstance(&ci, nullptr, &instance_); r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw VulkanError(r, "no Vulkan driver found (install your GPU's driver, or mesa-vulkan-drivers for "
                         "lavapipe on the CPU; VK_DRIVER_FILES overrides the search): vkCreateInstance");
  else
    vk_check(r, "vkCreateInstance");
  // Device-level functions too, as the loader's trampolines, which dispatch on the handle passed:
  // several Contexts (one per device, `--devices`) then share one set of function pointers.
  // volkLoadDevice would point them at one device's driver, wrong for any other device's handles
  // and a data race while another thread calls through them; a trampoline costs a jump per call.
  volkLoadInstance(instance_);

  if (validation_) {
    dbg.pNext = nullptr;
    VkResult r = vkCreateDebugUtilsMessengerEXT(instance_, &dbg, nullptr, &messenger_);
    if (r != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      throw VulkanError(r, "vkCreateDebugUtilsMessengerEXT");
    }
  }

  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  physical_.resize(n);
  vkEnumeratePhysicalDevices(instance_, &n, physical_.data());
  for (uint32_t i = 0; i < n; ++i) caps_.push_back(query_device_caps(physical_[i], i));
}

Instance::~Instance() {
  if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

uint32_t Instance::preferred_device() const {
  if (caps_.empty())
    throw Error("no Vulkan device found; on a machine without a GPU install mesa-vulkan-drivers (lavapipe)");
  if (const auto index = env::unsigned_integer(env::kDevice, caps_.size() - 1)) return static_cast<uint32_t>(*index);
  uint32_t best = 0;
  for (uint32_t i = 1; i < caps_.size(); ++i)
    if (device_type_rank(caps_[i].device_type) < device_type_rank(caps_[best].device_type)) best = i;
  return best;
}

}  // namespace vkspec
