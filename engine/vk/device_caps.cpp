#include "engine/vk/device_caps.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/text.h"
#include "engine/vk/coopmat_khr.h"

namespace vkspec {
namespace {

std::string vendor_name(uint32_t id, VkDriverId driver) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x10005: return driver == VK_DRIVER_ID_MESA_LLVMPIPE ? "Mesa (llvmpipe)" : "Mesa";
    default: return "unknown";
  }
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

std::string uuid_string(const uint8_t* u) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[u[i] >> 4];
    s += hex[u[i] & 15];
  }
  return s;
}

std::string version_string(uint32_t v) {
  std::ostringstream o;
  o << VK_API_VERSION_MAJOR(v) << '.' << VK_API_VERSION_MINOR(v) << '.' << VK_API_VERSION_PATCH(v);
  return o.str();
}

std::string mib(uint64_t bytes) {
  std::ostringstream o;
  o << (bytes >> 20) << " MiB";
  return o.str();
}

// The cooperativeMatrix feature of NV's or KHR's features struct (one layout, told apart by sType)
// and the memory model that cooperative-matrix shaders declare.
bool has_coopmat_features(VkPhysicalDevice pd, VkStructureType type) {
  static_assert(sizeof(CoopmatKhrFeatures) == sizeof(VkPhysicalDeviceCooperativeMatrixFeaturesNV));
  CoopmatKhrFeatures coop;
  coop.sType = type;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &coop;
  coop.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  return coop.cooperativeMatrix && f12.vulkanMemoryModel;
}

bool has_coopmat_nv_16x16x16_f16(VkPhysicalDevice pd) {
  if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return false;
  uint32_t n = 0;
  vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, nullptr);
  std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, props.data());
  for (const auto& p : props)
    if (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        p.DType == VK_COMPONENT_TYPE_FLOAT32_NV && p.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice pd) {
  uint32_t n_ext = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, nullptr);
  std::vector<VkExtensionProperties> exts(n_ext);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, exts.data());
  return exts;
}

// Name, vendor, type, driver, API version and UUID.
void read_identity(VkPhysicalDevice pd, const VkPhysicalDeviceProperties& p,
                   const VkPhysicalDeviceDriverProperties& driver, DeviceCaps& c) {
  c.name = p.deviceName;
  c.vendor_id = p.vendorID;
  c.device_id = p.deviceID;
  c.vendor = vendor_name(p.vendorID, driver.driverID);
  c.device_type = type_name(p.deviceType);
  c.driver_name = driver.driverName;
  c.driver_info = driver.driverInfo;
  c.api_version = p.apiVersion;
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &id;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  std::memcpy(c.device_uuid, id.deviceUUID, 16);
}

// size_ctl is only filled in when the device has VK_EXT_subgroup_size_control (size_control_ext).
void read_subgroup(const VkPhysicalDeviceSubgroupProperties& subgroup,
                   const VkPhysicalDeviceSubgroupSizeControlProperties& size_ctl, bool size_control_ext,
                   DeviceCaps& c) {
  c.subgroup_size = subgroup.subgroupSize;
  c.subgroup_in_compute = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  const VkSubgroupFeatureFlags ops = subgroup.supportedOperations;
  c.subgroup_basic = ops & VK_SUBGROUP_FEATURE_BASIC_BIT;
  c.subgroup_vote = ops & VK_SUBGROUP_FEATURE_VOTE_BIT;
  c.subgroup_arithmetic = ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  c.subgroup_ballot = ops & VK_SUBGROUP_FEATURE_BALLOT_BIT;
  c.subgroup_shuffle = ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  c.subgroup_shuffle_relative = ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
  c.subgroup_clustered = ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
  c.subgroup_quad = ops & VK_SUBGROUP_FEATURE_QUAD_BIT;
  c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;
  if (size_control_ext && size_ctl.minSubgroupSize) {
    c.min_subgroup_size = size_ctl.minSubgroupSize;
    c.max_subgroup_size = size_ctl.maxSubgroupSize;
  }
}

void read_limits(const VkPhysicalDeviceLimits& l, DeviceCaps& c) {
  c.max_shared_memory = l.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
  }
  c.max_storage_buffer_range = l.maxStorageBufferRange;
  c.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  c.max_texel_buffer_elements = l.maxTexelBufferElements;
  c.min_texel_buffer_offset_alignment = l.minTexelBufferOffsetAlignment;
  c.max_push_constants_size = l.maxPushConstantsSize;
  c.timestamp_period_ns = l.timestampPeriod;
}

// Identity, subgroup properties and limits, from one properties query.
void read_properties(VkPhysicalDevice pd, bool size_control_ext, DeviceCaps& c) {
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_ctl{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &subgroup;
  subgroup.pNext = &driver;
  if (size_control_ext) driver.pNext = &size_ctl;
  vkGetPhysicalDeviceProperties2(pd, &props2);
  read_identity(pd, props2.properties, driver, c);
  read_subgroup(subgroup, size_ctl, size_control_ext, c);
  read_limits(props2.properties.limits, c);
}

// Shader types, storage access, subgroup size control, and the extensions the kernels use.
void read_features(VkPhysicalDevice pd, const std::vector<VkExtensionProperties>& exts, bool size_control_ext,
                   DeviceCaps& c) {
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures fsize{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  f11.pNext = &f12;
  if (size_control_ext) f12.pNext = &fsize;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.shader_int64 = f2.features.shaderInt64;
  c.shader_float16 = f12.shaderFloat16;
  c.shader_int8 = f12.shaderInt8;
  c.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  c.storage_buffer_8bit = f12.storageBuffer8BitAccess;
  c.subgroup_size_control = size_control_ext && fsize.subgroupSizeControl && fsize.computeFullSubgroups;

  c.integer_dot_product = has_extension(exts, "VK_KHR_shader_integer_dot_product");
  c.cooperative_matrix_nv = has_extension(exts, "VK_NV_cooperative_matrix") &&
                            has_coopmat_features(pd, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  c.cooperative_matrix_khr =
      has_extension(exts, "VK_KHR_cooperative_matrix") && has_coopmat_features(pd, kCoopmatKhrFeaturesType);
  c.push_descriptor = has_extension(exts, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
}

// Memory heaps, and the first compute queue family's timestamps.
void read_memory_and_queues(VkPhysicalDevice pd, DeviceCaps& c) {
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    c.heaps.push_back({mem.memoryHeaps[i].size, (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});

  uint32_t n_q = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_q, nullptr);
  std::vector<VkQueueFamilyProperties> qs(n_q);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_q, qs.data());
  for (const auto& q : qs) {
    if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) {
      c.timestamps = true;
      c.timestamp_valid_bits = q.timestampValidBits;
      break;
    }
  }
}

// What the kernels choose by: combinations of the properties and features read above.
void derive_kernel_capabilities(VkPhysicalDevice pd, DeviceCaps& c) {
  const bool nv = c.cooperative_matrix_nv && c.shader_float16 && has_coopmat_nv_16x16x16_f16(pd);
  c.coopmat_khr_f16_16x16x16 = c.cooperative_matrix_khr && c.shader_float16 && has_coopmat_khr_16x16x16_f16(pd);
  c.coopmat_f16_16x16x16 = nv || c.coopmat_khr_f16_16x16x16;
  c.coopmat_khr = c.coopmat_khr_f16_16x16x16 && !nv;
  c.subgroup_reduce = c.subgroup_in_compute && c.subgroup_basic && c.subgroup_arithmetic;
  const bool fixed_size = !c.subgroup_size_control || c.min_subgroup_size == c.max_subgroup_size;
  c.subgroup_lane_reads = c.subgroup_in_compute && c.subgroup_basic && c.subgroup_ballot && c.subgroup_shuffle &&
                          fixed_size && c.subgroup_size >= 1;
  c.cpu_driver = c.device_type == "cpu";
}

}  // namespace

int device_type_rank(const std::string& t) {
  if (t == "discrete") return 0;
  if (t == "integrated") return 1;
  if (t == "virtual") return 2;
  if (t == "cpu") return 3;
  return 4;
}

uint64_t DeviceCaps::device_local_bytes() const {
  uint64_t total = 0;
  for (const auto& h : heaps)
    if (h.device_local) total += h.size;
  return total;
}

DeviceCaps query_device_caps(VkPhysicalDevice pd, uint32_t index) {
  DeviceCaps c;
  c.index = index;
  const std::vector<VkExtensionProperties> exts = device_extensions(pd);
  const bool size_control_ext = has_extension(exts, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  read_properties(pd, size_control_ext, c);
  read_features(pd, exts, size_control_ext, c);
  read_memory_and_queues(pd, c);
  derive_kernel_capabilities(pd, c);
  return c;
}

void mask_device_features(DeviceCaps& c, const std::string& list) {
  const std::pair<const char*, bool*> features[] = {{"push-descriptor", &c.push_descriptor},
                                                    {"int64", &c.shader_int64},
                                                    {"int8", &c.shader_int8},
                                                    {"float16", &c.shader_float16},
                                                    {"16bit-storage", &c.storage_buffer_16bit},
                                                    {"8bit-storage", &c.storage_buffer_8bit},
                                                    {"subgroup-size-control", &c.subgroup_size_control},
                                                    {"cooperative-matrix", &c.cooperative_matrix_nv},
                                                    {"small-offset-alignment", nullptr}};
  for (const std::string& name : split(list, ',')) {
    bool known = false;
    for (const auto& [feature, flag] : features)
      if (name == feature) {
        if (flag) *flag = false;
        known = true;
      }
    if (!known)
      throw Error("VKSPEC_MASK_FEATURES: unknown feature '" + name +
                  "' (push-descriptor, int64, int8, float16, 16bit-storage, 8bit-storage, subgroup-size-control, "
                  "cooperative-matrix, small-offset-alignment)");
    if (name == "cooperative-matrix") c.cooperative_matrix_khr = c.coopmat_khr_f16_16x16x16 = c.coopmat_khr = false;
    // SwiftShader's: views bound at offsets finer than this take staging copies (BindingStaging).
    if (name == "small-offset-alignment")
      c.min_storage_buffer_offset_alignment = std::max<uint64_t>(c.min_storage_buffer_offset_alignment, 256);
    if (name == "subgroup-size-control") c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;
  }
  c.coopmat_khr_f16_16x16x16 = c.coopmat_khr_f16_16x16x16 && c.shader_float16;
  c.coopmat_khr = c.coopmat_khr && c.coopmat_khr_f16_16x16x16;
  c.coopmat_f16_16x16x16 = c.coopmat_f16_16x16x16 && c.shader_float16 && (c.cooperative_matrix_nv || c.coopmat_khr);
}

std::string DeviceCaps::to_text() const {
  std::ostringstream o;
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  o << "Device " << index << ": " << name << "\n"
    << "  vendor            " << vendor << " (0x" << std::hex << vendor_id << ", device 0x" << device_id << std::dec
    << "), " << device_type << "\n"
    << "  driver            " << driver_name << " " << driver_info << ", Vulkan " << version_string(api_version) << "\n"
    << "  device uuid       " << uuid_string(device_uuid) << "\n"
    << "  subgroup size     " << subgroup_size;
  if (subgroup_size_control) o << " (controllable " << min_subgroup_size << "-" << max_subgroup_size << ")";
  o << ", in compute: " << yes(subgroup_in_compute) << "\n"
    << "  subgroup ops      basic " << yes(subgroup_basic) << ", vote " << yes(subgroup_vote) << ", arithmetic "
    << yes(subgroup_arithmetic) << ", ballot " << yes(subgroup_ballot) << ", shuffle " << yes(subgroup_shuffle)
    << ", shuffle-relative " << yes(subgroup_shuffle_relative) << ", clustered " << yes(subgroup_clustered) << ", quad "
    << yes(subgroup_quad) << "\n"
    << "  fp16 arithmetic   " << yes(shader_float16) << ", 16-bit storage " << yes(storage_buffer_16bit)
    << ", 8-bit storage " << yes(storage_buffer_8bit) << ", int8 " << yes(shader_int8) << ", int64 "
    << yes(shader_int64) << "\n"
    << "  integer dot       " << yes(integer_dot_product) << "\n"
    << "  coop. matrix      NV " << yes(cooperative_matrix_nv) << ", KHR " << yes(cooperative_matrix_khr)
    << (coopmat_f16_16x16x16 ? (coopmat_khr ? " (matmul through KHR)" : " (matmul through NV)") : "") << "\n"
    << "  push descriptors  " << yes(push_descriptor) << (push_descriptor ? "" : " (descriptor sets from pools)")
    << "\n"
    // The one requirement left: everything above is optional, with a slower path where absent.
    << "  vkspec needs      Vulkan 1.2 and a compute queue: Vulkan 1.2 "
    << (api_version >= VK_API_VERSION_1_2 ? "met" : "MISSING") << "\n"
    << "  shared memory     " << max_shared_memory / 1024 << " KiB, workgroup <= " << max_workgroup_invocations
    << " invocations\n"
    << "  storage binding   max range " << mib(max_storage_buffer_range) << ", offset alignment "
    << min_storage_buffer_offset_alignment << "\n"
    << "  memory heaps     ";
  for (const auto& h : heaps) o << " " << mib(h.size) << (h.device_local ? " (device-local)" : " (host)");
  o << "\n  timestamps        " << yes(timestamps);
  if (timestamps) o << ", " << timestamp_valid_bits << " bits, period " << timestamp_period_ns << " ns";
  o << "\n";
  return o.str();
}

std::string DeviceCaps::to_json() const {
  nlohmann::json j;
  j["index"] = index;
  j["name"] = name;
  j["vendor"] = vendor;
  j["vendor_id"] = vendor_id;
  j["device_id"] = device_id;
  j["device_type"] = device_type;
  j["driver_name"] = driver_name;
  j["driver_info"] = driver_info;
  j["api_version"] = version_string(api_version);
  j["device_uuid"] = uuid_string(device_uuid);
  j["subgroup"] = {{"size", subgroup_size},
                   {"min_size", min_subgroup_size},
                   {"max_size", max_subgroup_size},
                   {"size_control", subgroup_size_control},
                   {"in_compute", subgroup_in_compute},
                   {"basic", subgroup_basic},
                   {"vote", subgroup_vote},
                   {"arithmetic", subgroup_arithmetic},
                   {"ballot", subgroup_ballot},
                   {"shuffle", subgroup_shuffle},
                   {"shuffle_relative", subgroup_shuffle_relative},
                   {"clustered", subgroup_clustered},
                   {"quad", subgroup_quad}};
  j["shader_float16"] = shader_float16;
  j["shader_int8"] = shader_int8;
  j["shader_int64"] = shader_int64;
  j["storage_buffer_16bit"] = storage_buffer_16bit;
  j["storage_buffer_8bit"] = storage_buffer_8bit;
  j["integer_dot_product"] = integer_dot_product;
  j["cooperative_matrix_nv"] = cooperative_matrix_nv;
  j["cooperative_matrix_khr"] = cooperative_matrix_khr;
  j["coopmat_matmul"] = coopmat_f16_16x16x16 ? (coopmat_khr ? "khr" : "nv") : "none";
  j["push_descriptor"] = push_descriptor;
  j["max_shared_memory"] = max_shared_memory;
  j["max_workgroup_invocations"] = max_workgroup_invocations;
  j["max_storage_buffer_range"] = max_storage_buffer_range;
  j["min_storage_buffer_offset_alignment"] = min_storage_buffer_offset_alignment;
  j["max_texel_buffer_elements"] = max_texel_buffer_elements;
  j["max_push_constants_size"] = max_push_constants_size;
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& h : heaps) hs.push_back({{"size", h.size}, {"device_local", h.device_local}});
  j["heaps"] = hs;
  j["timestamps"] = timestamps;
  j["timestamp_period_ns"] = timestamp_period_ns;
  j["timestamp_valid_bits"] = timestamp_valid_bits;
  return j.dump();
}

}  // namespace vkspec
