#include "engine/vk/device_caps.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <variant>

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

// Everything the device reports that DeviceCaps is read from, queried once: its extensions, its
// properties and features (their pNext chains point into this record, which therefore stays where
// it was made), its memory heaps and its queue families.
struct DeviceQuery {
  explicit DeviceQuery(VkPhysicalDevice device);
  DeviceQuery(const DeviceQuery&) = delete;
  DeviceQuery& operator=(const DeviceQuery&) = delete;

  bool has(const char* extension) const { return has_extension(exts, extension); }
  const VkPhysicalDeviceLimits& limits() const { return props2.properties.limits; }
  // The first compute queue family with timestamps (nullptr: none).
  const VkQueueFamilyProperties* timestamp_queue() const {
    for (const auto& q : queues)
      if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) return &q;
    return nullptr;
  }

  VkPhysicalDevice pd;
  std::vector<VkExtensionProperties> exts;
  bool size_control_ext;  // VK_EXT_subgroup_size_control: only then are size_ctl and fsize filled in
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_ctl{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures fsize{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceMemoryProperties mem{};
  std::vector<VkQueueFamilyProperties> queues;
};

DeviceQuery::DeviceQuery(VkPhysicalDevice device)
    : pd(device),
      exts(device_extensions(device)),
      size_control_ext(has_extension(exts, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
  props2.pNext = &subgroup;
  subgroup.pNext = &driver;
  if (size_control_ext) driver.pNext = &size_ctl;
  vkGetPhysicalDeviceProperties2(pd, &props2);
  f2.pNext = &f11;
  f11.pNext = &f12;
  if (size_control_ext) f12.pNext = &fsize;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  queues.resize(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, queues.data());
}

// A capability's field of DeviceCaps and how the device reports it.
template <typename T>
struct Member {
  T DeviceCaps::*field;
  T (*read)(const DeviceQuery&);
};
using Field = std::variant<std::monostate, Member<bool>, Member<uint32_t>, Member<uint64_t>, Member<float>>;
using Text = std::string (*)(const DeviceCaps&);

// One entry of kCapabilities: a capability (its field), or a line of to_text() that shows none.
struct Capability {
  Field field;
  const char* key = nullptr;    // its to_json() key (nullptr: not there)
  const char* group = nullptr;  // the JSON object it sits in (nullptr: the record itself)
  const char* line = nullptr;   // the to_text() line it is shown on (nullptr: not shown)
  const char* label = "";       // its words there, before the value
  Text text = nullptr;          // what it shows there instead of `label value`
  const char* mask = nullptr;   // its VKSPEC_MASK_FEATURES name (nullptr: not masked)
  // What masking it does besides clearing it (a flag): what was derived from it, or, for a limit,
  // the masking itself.
  void (*also_masked)(DeviceCaps&) = nullptr;

  constexpr Capability in(const char* object) const {
    Capability c = *this;
    c.group = object;
    return c;
  }
  constexpr Capability shown(const char* on, const char* words = "") const {
    Capability c = *this;
    c.line = on;
    c.label = words;
    return c;
  }
  constexpr Capability shown(const char* on, Text how) const {
    Capability c = shown(on);
    c.text = how;
    return c;
  }
  constexpr Capability masked(const char* name, void (*also)(DeviceCaps&) = nullptr) const {
    Capability c = *this;
    c.mask = name;
    c.also_masked = also;
    return c;
  }
};

// The capability in `field`, under `key` in to_json(), as the device reports it by `from`.
template <typename T>
constexpr Capability from_device(const char* key, T DeviceCaps::*field,
                                 typename std::common_type<T (*)(const DeviceQuery&)>::type from) {
  Capability c{Member<T>{field, from}};
  c.key = key;
  return c;
}

// A line of to_text() about no capability of its own.
constexpr Capability text_line(const char* line, Text how) { return Capability{}.shown(line, how); }

bool subgroup_op(const DeviceQuery& q, VkSubgroupFeatureFlagBits op) {
  return (q.subgroup.supportedOperations & op) != 0;
}

std::string yes(bool b) { return b ? "yes" : "no"; }

const char* coopmat_matmul(const DeviceCaps& c) {
  return c.coopmat_f16_16x16x16 ? (c.coopmat_khr ? "khr" : "nv") : "none";
}

// Every capability: read from the device, masked, shown and written as JSON from here. A line's
// entries follow each other, in the order the line shows them.
constexpr Capability kCapabilities[] = {
    text_line("vendor",
              [](const DeviceCaps& c) {
                std::ostringstream o;
                o << c.vendor << " (0x" << std::hex << c.vendor_id << ", device 0x" << c.device_id << std::dec << "), "
                  << c.device_type;
                return o.str();
              }),
    text_line("driver",
              [](const DeviceCaps& c) {
                return c.driver_name + " " + c.driver_info + ", Vulkan " + version_string(c.api_version);
              }),
    text_line("device uuid", [](const DeviceCaps& c) { return uuid_string(c.device_uuid); }),

    from_device("size", &DeviceCaps::subgroup_size, [](const DeviceQuery& q) { return q.subgroup.subgroupSize; })
        .in("subgroup")
        .shown("subgroup size",
               [](const DeviceCaps& c) {
                 std::string s = std::to_string(c.subgroup_size);
                 if (c.subgroup_size_control)
                   s += " (controllable " + std::to_string(c.min_subgroup_size) + "-" +
                        std::to_string(c.max_subgroup_size) + ")";
                 return s;
               }),
    from_device("min_size", &DeviceCaps::min_subgroup_size,
                [](const DeviceQuery& q) {
                  return q.size_control_ext && q.size_ctl.minSubgroupSize ? q.size_ctl.minSubgroupSize
                                                                          : q.subgroup.subgroupSize;
                })
        .in("subgroup"),
    from_device("max_size", &DeviceCaps::max_subgroup_size,
                [](const DeviceQuery& q) {
                  return q.size_control_ext && q.size_ctl.minSubgroupSize ? q.size_ctl.maxSubgroupSize
                                                                          : q.subgroup.subgroupSize;
                })
        .in("subgroup"),
    from_device("size_control", &DeviceCaps::subgroup_size_control,
                [](const DeviceQuery& q) {
                  return q.size_control_ext && q.fsize.subgroupSizeControl && q.fsize.computeFullSubgroups;
                })
        .in("subgroup")
        .masked("subgroup-size-control",
                [](DeviceCaps& c) { c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size; }),
    from_device("in_compute", &DeviceCaps::subgroup_in_compute,
                [](const DeviceQuery& q) { return (q.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0; })
        .in("subgroup")
        .shown("subgroup size", "in compute:"),
    from_device("basic", &DeviceCaps::subgroup_basic,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_BASIC_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "basic"),
    from_device("vote", &DeviceCaps::subgroup_vote,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_VOTE_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "vote"),
    from_device("arithmetic", &DeviceCaps::subgroup_arithmetic,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "arithmetic"),
    from_device("ballot", &DeviceCaps::subgroup_ballot,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_BALLOT_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "ballot"),
    from_device("shuffle", &DeviceCaps::subgroup_shuffle,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_SHUFFLE_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "shuffle"),
    from_device("shuffle_relative", &DeviceCaps::subgroup_shuffle_relative,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "shuffle-relative"),
    from_device("clustered", &DeviceCaps::subgroup_clustered,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_CLUSTERED_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "clustered"),
    from_device("quad", &DeviceCaps::subgroup_quad,
                [](const DeviceQuery& q) { return subgroup_op(q, VK_SUBGROUP_FEATURE_QUAD_BIT); })
        .in("subgroup")
        .shown("subgroup ops", "quad"),

    from_device("shader_float16", &DeviceCaps::shader_float16,
                [](const DeviceQuery& q) { return q.f12.shaderFloat16 != 0; })
        .shown("fp16 arithmetic")
        .masked("float16"),
    from_device("storage_buffer_16bit", &DeviceCaps::storage_buffer_16bit,
                [](const DeviceQuery& q) { return q.f11.storageBuffer16BitAccess != 0; })
        .shown("fp16 arithmetic", "16-bit storage")
        .masked("16bit-storage"),
    from_device("storage_buffer_8bit", &DeviceCaps::storage_buffer_8bit,
                [](const DeviceQuery& q) { return q.f12.storageBuffer8BitAccess != 0; })
        .shown("fp16 arithmetic", "8-bit storage")
        .masked("8bit-storage"),
    from_device("shader_int8", &DeviceCaps::shader_int8, [](const DeviceQuery& q) { return q.f12.shaderInt8 != 0; })
        .shown("fp16 arithmetic", "int8")
        .masked("int8"),
    from_device("shader_int64", &DeviceCaps::shader_int64,
                [](const DeviceQuery& q) { return q.f2.features.shaderInt64 != 0; })
        .shown("fp16 arithmetic", "int64")
        .masked("int64"),
    from_device("integer_dot_product", &DeviceCaps::integer_dot_product,
                [](const DeviceQuery& q) { return q.has("VK_KHR_shader_integer_dot_product"); })
        .shown("integer dot"),
    from_device("cooperative_matrix_nv", &DeviceCaps::cooperative_matrix_nv,
                [](const DeviceQuery& q) {
                  return q.has("VK_NV_cooperative_matrix") &&
                         has_coopmat_features(q.pd, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
                })
        .shown("coop. matrix", "NV")
        .masked("cooperative-matrix"),
    from_device("cooperative_matrix_khr", &DeviceCaps::cooperative_matrix_khr,
                [](const DeviceQuery& q) {
                  return q.has("VK_KHR_cooperative_matrix") && has_coopmat_features(q.pd, kCoopmatKhrFeaturesType);
                })
        .shown("coop. matrix",
               [](const DeviceCaps& c) {
                 const std::string path = c.coopmat_khr ? " (matmul through KHR)" : " (matmul through NV)";
                 return "KHR " + yes(c.cooperative_matrix_khr) + (c.coopmat_f16_16x16x16 ? path : "");
               })
        .masked("cooperative-matrix", [](DeviceCaps& c) { c.coopmat_khr_f16_16x16x16 = c.coopmat_khr = false; }),
    from_device("push_descriptor", &DeviceCaps::push_descriptor,
                [](const DeviceQuery& q) { return q.has(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME); })
        .shown("push descriptors",
               [](const DeviceCaps& c) {
                 return yes(c.push_descriptor) + (c.push_descriptor ? "" : " (descriptor sets from pools)");
               })
        .masked("push-descriptor"),
    // The one requirement left: everything above is optional, with a slower path where absent.
    text_line("vkspec needs",
              [](const DeviceCaps& c) {
                return std::string("Vulkan 1.2 and a compute queue: Vulkan 1.2 ") +
                       (c.api_version >= VK_API_VERSION_1_2 ? "met" : "MISSING");
              }),

    from_device("max_shared_memory", &DeviceCaps::max_shared_memory,
                [](const DeviceQuery& q) { return q.limits().maxComputeSharedMemorySize; })
        .shown("shared memory",
               [](const DeviceCaps& c) { return std::to_string(c.max_shared_memory / 1024) + " KiB"; }),
    from_device("max_workgroup_invocations", &DeviceCaps::max_workgroup_invocations,
                [](const DeviceQuery& q) { return q.limits().maxComputeWorkGroupInvocations; })
        .shown("shared memory",
               [](const DeviceCaps& c) {
                 return "workgroup <= " + std::to_string(c.max_workgroup_invocations) + " invocations";
               }),
    from_device("max_storage_buffer_range", &DeviceCaps::max_storage_buffer_range,
                [](const DeviceQuery& q) -> uint64_t { return q.limits().maxStorageBufferRange; })
        .shown("storage binding", [](const DeviceCaps& c) { return "max range " + mib(c.max_storage_buffer_range); }),
    // SwiftShader's: views bound at offsets finer than this take staging copies (BindingStaging).
    from_device("min_storage_buffer_offset_alignment", &DeviceCaps::min_storage_buffer_offset_alignment,
                [](const DeviceQuery& q) -> uint64_t { return q.limits().minStorageBufferOffsetAlignment; })
        .shown("storage binding", "offset alignment")
        .masked("small-offset-alignment",
                [](DeviceCaps& c) {
                  c.min_storage_buffer_offset_alignment =
                      std::max<uint64_t>(c.min_storage_buffer_offset_alignment, 256);
                }),
    from_device("max_texel_buffer_elements", &DeviceCaps::max_texel_buffer_elements,
                [](const DeviceQuery& q) -> uint64_t { return q.limits().maxTexelBufferElements; }),
    from_device(nullptr, &DeviceCaps::min_texel_buffer_offset_alignment,
                [](const DeviceQuery& q) -> uint64_t { return q.limits().minTexelBufferOffsetAlignment; }),
    from_device("max_push_constants_size", &DeviceCaps::max_push_constants_size,
                [](const DeviceQuery& q) { return q.limits().maxPushConstantsSize; }),
    text_line("memory heaps",
              [](const DeviceCaps& c) {
                std::string s;
                for (const auto& h : c.heaps)
                  s += (s.empty() ? "" : " ") + mib(h.size) + (h.device_local ? " (device-local)" : " (host)");
                return s;
              }),

    from_device("timestamps", &DeviceCaps::timestamps,
                [](const DeviceQuery& q) { return q.timestamp_queue() != nullptr; })
        .shown("timestamps",
               [](const DeviceCaps& c) {
                 std::ostringstream o;
                 o << yes(c.timestamps);
                 if (c.timestamps)
                   o << ", " << c.timestamp_valid_bits << " bits, period " << c.timestamp_period_ns << " ns";
                 return o.str();
               }),
    from_device("timestamp_valid_bits", &DeviceCaps::timestamp_valid_bits,
                [](const DeviceQuery& q) {
                  const VkQueueFamilyProperties* t = q.timestamp_queue();
                  return t ? t->timestampValidBits : 0u;
                }),
    from_device("timestamp_period_ns", &DeviceCaps::timestamp_period_ns,
                [](const DeviceQuery& q) { return q.limits().timestampPeriod; }),
};

// Name, vendor, type, driver, API version and UUID.
void read_identity(const DeviceQuery& q, DeviceCaps& c) {
  const VkPhysicalDeviceProperties& p = q.props2.properties;
  c.name = p.deviceName;
  c.vendor_id = p.vendorID;
  c.device_id = p.deviceID;
  c.vendor = vendor_name(p.vendorID, q.driver.driverID);
  c.device_type = type_name(p.deviceType);
  c.driver_name = q.driver.driverName;
  c.driver_info = q.driver.driverInfo;
  c.api_version = p.apiVersion;
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &id;
  vkGetPhysicalDeviceProperties2(q.pd, &p2);
  std::memcpy(c.device_uuid, id.deviceUUID, 16);
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

// The names mask_device_features knows, in the table's order.
std::string mask_names() {
  std::vector<std::string> names;
  for (const Capability& cap : kCapabilities)
    if (cap.mask && std::find(names.begin(), names.end(), cap.mask) == names.end()) names.push_back(cap.mask);
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// How a capability reads on its to_text() line.
std::string shown_text(const Capability& cap, const DeviceCaps& c) {
  if (cap.text) return cap.text(c);
  const std::string value = std::visit(
      [&](const auto& m) -> std::string {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<M, Member<bool>>) {
          return yes(c.*m.field);
        } else {
          std::ostringstream o;
          o << c.*m.field;
          return o.str();
        }
      },
      cap.field);
  return *cap.label ? std::string(cap.label) + " " + value : value;
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
  const DeviceQuery q(pd);
  DeviceCaps c;
  c.index = index;
  read_identity(q, c);
  for (const Capability& cap : kCapabilities)
    std::visit(
        [&](const auto& m) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, std::monostate>) c.*m.field = m.read(q);
        },
        cap.field);
  const VkPhysicalDeviceLimits& l = q.limits();
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
  }
  for (uint32_t i = 0; i < q.mem.memoryHeapCount; ++i)
    c.heaps.push_back({q.mem.memoryHeaps[i].size, (q.mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  derive_kernel_capabilities(pd, c);
  return c;
}

void mask_device_features(DeviceCaps& c, const std::string& list) {
  for (const std::string& name : split(list, ',')) {
    bool known = false;
    for (const Capability& cap : kCapabilities) {
      if (!cap.mask || name != cap.mask) continue;
      known = true;
      if (const auto* flag = std::get_if<Member<bool>>(&cap.field)) c.*flag->field = false;
      if (cap.also_masked) cap.also_masked(c);
    }
    if (!known) throw Error("VKSPEC_MASK_FEATURES: unknown feature '" + name + "' (" + mask_names() + ")");
  }
  c.coopmat_khr_f16_16x16x16 = c.coopmat_khr_f16_16x16x16 && c.shader_float16;
  c.coopmat_khr = c.coopmat_khr && c.coopmat_khr_f16_16x16x16;
  c.coopmat_f16_16x16x16 = c.coopmat_f16_16x16x16 && c.shader_float16 && (c.cooperative_matrix_nv || c.coopmat_khr);
}

std::string DeviceCaps::to_text() const {
  std::string s = "Device " + std::to_string(index) + ": " + name + "\n";
  const char* line = nullptr;
  for (const Capability& cap : kCapabilities) {
    if (!cap.line) continue;
    if (line && std::strcmp(line, cap.line) == 0) {
      s += ", ";
    } else {
      if (line) s += "\n";
      line = cap.line;
      s += "  " + std::string(line) + std::string(18 - std::min<size_t>(std::strlen(line), 17), ' ');
    }
    s += shown_text(cap, *this);
  }
  return s + "\n";
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
  for (const Capability& cap : kCapabilities) {
    if (!cap.key) continue;
    nlohmann::json& slot = cap.group ? j[cap.group][cap.key] : j[cap.key];
    std::visit(
        [&](const auto& m) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, std::monostate>) slot = this->*m.field;
        },
        cap.field);
  }
  j["coopmat_matmul"] = coopmat_matmul(*this);
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& h : heaps) hs.push_back({{"size", h.size}, {"device_local", h.device_local}});
  j["heaps"] = hs;
  return j.dump();
}

}  // namespace vkspec
