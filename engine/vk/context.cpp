#include "engine/vk/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <vector>

#include "common/env.h"
#include "engine/vk/cache_file.h"
#include "engine/vk/command_stream.h"
#include "engine/vk/coopmat_khr.h"
#include "shaders/shader_ids.h"
#include "engine/vk/vulkan_error.h"

namespace vkspec {
namespace {

// "0", or "R,MG" or "R,MG,FROM": R and MG from 1 to 16 (the shader's register arrays are R x MG
// sums), FROM from 1 to 256.
ContextOptions::GemvRowsTile parse_gemv_rows_tile(const std::string& text) {
  if (text == "0") return {};
  const auto bad = [&] {
    return Error(std::string(env::kGemvRowsTile.name) + "=" + text +
                 " is not 0 or R,MG[,FROM] with R and MG from 1 to 16 and FROM from 1 to 256");
  };
  uint32_t v[3] = {0, 0, 0};
  size_t field = 0, start = 0;
  for (;; ++field) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (field > 2 || part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad();
    v[field] = static_cast<uint32_t>(std::stoul(part));
    if (v[field] < 1 || v[field] > (field == 2 ? 256u : 16u)) throw bad();
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (field < 1) throw bad();
  return {v[0], v[1], v[2]};
}

// Prefer a compute-only family (async compute on discrete GPUs), else any with compute; with a
// window to present to, the first family that does compute, graphics and presenting to it.
uint32_t choose_queue_family(VkPhysicalDevice physical, VkSurfaceKHR present_surface, const std::string& where) {
  uint32_t n_q = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n_q, nullptr);
  std::vector<VkQueueFamilyProperties> qs(n_q);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n_q, qs.data());
  int family = -1;
  if (present_surface) {
    const VkQueueFlags need = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT;
    for (uint32_t i = 0; i < n_q && family < 0; ++i) {
      VkBool32 present = VK_FALSE;
      vkGetPhysicalDeviceSurfaceSupportKHR(physical, i, present_surface, &present);
      if ((qs[i].queueFlags & need) == need && present) family = static_cast<int>(i);
    }
    if (family < 0) throw Error("no queue family does compute, graphics and presenting to the window" + where);
  }
  for (uint32_t i = 0; i < n_q && family < 0 && !present_surface; ++i)
    if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        qs[i].timestampValidBits)
      family = static_cast<int>(i);
  for (uint32_t i = 0; i < n_q && family < 0; ++i)
    if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int>(i);
  if (family < 0) throw Error("no compute queue" + where);
  return static_cast<uint32_t>(family);
}

// The feature chain and extensions vkCreateDevice gets: every optional feature the kernels may
// use and the device has. Its structs point at each other, so it is neither copied nor moved.
struct EnabledFeatures {
  explicit EnabledFeatures(const DeviceCaps& caps) {
    f2.pNext = &f11;
    f11.pNext = &f12;
    f2.features.shaderInt64 = caps.shader_int64;
    f11.storageBuffer16BitAccess = caps.storage_buffer_16bit;
    f12.shaderFloat16 = caps.shader_float16;
    f12.shaderInt8 = caps.shader_int8;
    f12.storageBuffer8BitAccess = caps.storage_buffer_8bit;
    // Without push descriptors every CommandStream allocates its sets from a DescriptorArena.
    if (caps.push_descriptor) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    if (caps.subgroup_size_control) {
      extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
      fsize.subgroupSizeControl = VK_TRUE;
      fsize.computeFullSubgroups = VK_TRUE;
      f12.pNext = &fsize;
    }
    // DeviceCaps only reports cooperative matrix with its feature bit and the memory model that
    // glslang emits for cooperative-matrix shaders, so both can be turned on here; one extension,
    // the one the matmul kernel goes through.
    if (caps.coopmat_khr) {
      extensions.push_back("VK_KHR_cooperative_matrix");
      f12.vulkanMemoryModel = VK_TRUE;
      fcoop_khr.cooperativeMatrix = VK_TRUE;
      fcoop_khr.pNext = f2.pNext;
      f2.pNext = &fcoop_khr;
    } else if (caps.cooperative_matrix_nv) {
      extensions.push_back("VK_NV_cooperative_matrix");
      f12.vulkanMemoryModel = VK_TRUE;
      fcoop.cooperativeMatrix = VK_TRUE;
      fcoop.pNext = f2.pNext;
      f2.pNext = &fcoop;
    }
  }
  EnabledFeatures(const EnabledFeatures&) = delete;
  EnabledFeatures& operator=(const EnabledFeatures&) = delete;

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures fsize{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  CoopmatKhrFeatures fcoop_khr;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  std::vector<const char*> extensions;
};

// Adds the extensions ContextOptions asks for (the strings must outlive the device's creation),
// checked here so a missing one is named; vkCreateDevice would only say EXTENSION_NOT_PRESENT.
void add_required_extensions(VkPhysicalDevice physical, const std::vector<std::string>& required,
                             const std::string& where, std::vector<const char*>& exts) {
  uint32_t n_ext = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &n_ext, nullptr);
  std::vector<VkExtensionProperties> have(n_ext);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &n_ext, have.data());
  for (const std::string& e : required) {
    if (std::none_of(have.begin(), have.end(), [&](const VkExtensionProperties& p) { return e == p.extensionName; }))
      throw Error("device extension " + e + " is required but not supported" + where);
    if (std::none_of(exts.begin(), exts.end(), [&](const char* x) { return e == x; })) exts.push_back(e.c_str());
  }
}

VkDevice create_device(VkPhysicalDevice physical, uint32_t queue_family, const EnabledFeatures& features,
                       const std::string& where) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &features.f2;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = static_cast<uint32_t>(features.extensions.size());
  di.ppEnabledExtensionNames = features.extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  vk_check(vkCreateDevice(physical, &di, nullptr, &device), ("vkCreateDevice" + where).c_str());
  return device;
}

}  // namespace

ContextOptions ContextOptions::from_environment() {
  ContextOptions o;
  o.device_memory_cap = env::byte_count(env::kMaxDeviceMemory).value_or(0);
  constexpr uint64_t kNsPerMs = 1000000;
  if (const auto ms = env::unsigned_integer(env::kFenceTimeoutMs, UINT64_MAX / kNsPerMs))
    o.fence_timeout_ns = *ms * kNsPerMs;
  o.cache_dir = cache_dir_from_environment();
  o.disable_coopmat = env::flag(env::kDisableCoopmat);
  o.coopmat_khr = env::flag(env::kCoopmatKhr);
  o.disable_matmul_folds = env::flag(env::kDisableMatmulFolds);
  o.gpu_kernels = env::flag(env::kGpuKernels);
  if (const auto masked = env::text(env::kMaskFeatures)) o.masked_features = *masked;
  if (const auto rows = env::unsigned_integer(env::kGemvMaxRows, 256)) {
    if (*rows == 0) throw Error("VKSPEC_GEMV_MAX_ROWS=0 is not a row count from 1 to 256");
    o.gemv_max_rows = static_cast<uint32_t>(*rows);
  }
  if (const auto tile = env::text(env::kGemvRowsTile)) o.gemv_rows_tile = parse_gemv_rows_tile(*tile);
  return o;
}

std::unique_ptr<Context> Context::create_default() {
  auto instance = std::make_shared<Instance>();
  const uint32_t index = instance->preferred_device();
  return std::make_unique<Context>(std::move(instance), index);
}

Context::Context(std::shared_ptr<Instance> instance, uint32_t device_index, const ContextOptions& options)
    : instance_(std::move(instance)), options_(options) {
  const auto& devices = instance_->physical_devices();
  if (device_index >= devices.size())
    throw Error("device index " + std::to_string(device_index) + " out of range: " + std::to_string(devices.size()) +
                " Vulkan device(s) present");
  physical_ = devices[device_index];
  caps_ = instance_->devices()[device_index];
  // cpu_driver is read only to choose kernel variants; clearing it here is the whole of
  // VKSPEC_GPU_KERNELS, so every op takes its GPU branch and nothing else changes.
  if (options_.gpu_kernels) caps_.cpu_driver = false;
  if (options_.coopmat_khr) caps_.coopmat_khr = caps_.coopmat_khr_f16_16x16x16;
  mask_device_features(caps_, options_.masked_features);
  const std::string where = " on device " + std::to_string(device_index) + " (" + caps_.name + ")";
  if (caps_.api_version < VK_API_VERSION_1_2) throw Error("Vulkan 1.2 is required" + where);

  queue_family_ = choose_queue_family(physical_, options_.present_surface, where);
  EnabledFeatures features(caps_);
  add_required_extensions(physical_, options_.device_extensions, where, features.extensions);
  device_ = create_device(physical_, queue_family_, features, where);
  // No volkLoadDevice: the Instance loaded the loader's trampolines, valid for every device.
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  allocator_ = std::make_unique<Allocator>(physical_, device_, caps_.min_storage_buffer_offset_alignment,
                                           options_.device_memory_cap, caps_.max_texel_buffer_elements,
                                           caps_.min_texel_buffer_offset_alignment);
  load_pipeline_cache();
  // computeFullSubgroups is on wherever subgroup_size_control is (EnabledFeatures).
  pipelines_ =
      std::make_unique<PipelineTable>(device_, pipeline_cache_, caps_.subgroup_size_control ? caps_.subgroup_size : 0,
                                      caps_.push_descriptor, caps_.coopmat_khr);
  try {
    if (caps_.device_type == "cpu" && caps_.subgroup_reduce) check_subgroup_lanes(where);
  } catch (...) {
    release();
    throw;
  }
}

void Context::check_subgroup_lanes(const std::string& where) {
  const uint32_t reported = std::max(caps_.subgroup_size, 1u);
  Tensor out = tensor(DType::U32, {4}, "subgroup probe");
  {
    CommandStream s(*this);
    s.dispatch(pipeline(shaders::subgroup_probe, {std::min(reported, caps_.max_workgroup_invocations)}), {out},
               static_cast<const void*>(nullptr), 0, 1);
    s.submit_and_wait();
  }
  uint32_t got[4] = {};
  download(out, got, sizeof(got));
  if (got[0] != reported)
    throw Error("the device reports subgroups of " + std::to_string(reported) + " lanes but runs " +
                std::to_string(got[0]) + where +
                "; every kernel sized by it would write past its arrays (Mesa's lavapipe does this at "
                "LP_NATIVE_VECTOR_WIDTH above 512: use 512 or less)");
}

Context::~Context() { release(); }

void Context::release() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  pipelines_.reset();
  save_pipeline_cache();
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  allocator_.reset();
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

std::string Context::pipeline_cache_path() const {
  if (options_.cache_dir.empty()) return "";
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (uint8_t b : caps_.device_uuid) id += {hex[b >> 4], hex[b & 15]};
  return options_.cache_dir + "/pipelines-" + id + ".bin";
}

void Context::load_pipeline_cache() {
  std::vector<char> data;
  const std::string path = pipeline_cache_path();
  if (!path.empty()) data = read_cache_file(path);
  // Check the header ourselves: a stale or damaged cache file is ignored, never handed to the driver.
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(physical_, &p);
  bool ok = data.size() >= 32;
  if (ok) {
    uint32_t h[4];
    std::memcpy(h, data.data(), 16);
    ok = h[0] >= 32 && h[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && h[2] == p.vendorID && h[3] == p.deviceID &&
         std::memcmp(data.data() + 16, p.pipelineCacheUUID, VK_UUID_SIZE) == 0;
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  if (ok) {
    ci.initialDataSize = data.size();
    ci.pInitialData = data.data();
  }
  vk_check(vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
}

void Context::save_pipeline_cache() {
  const std::string path = pipeline_cache_path();
  if (path.empty() || !pipeline_cache_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return;
  write_cache_file(path, data.data(), size);
}

Tensor Context::tensor(DType dtype, Shape shape, const std::string& name, MemoryUsage usage) {
  const uint64_t bytes = static_cast<uint64_t>(shape.numel()) * dtype_size(dtype);
  return Tensor(allocator_->allocate(bytes, usage, name), dtype, shape, name);
}

void Context::upload(const Tensor& t, const void* data, size_t bytes) {
  if (bytes != t.bytes())
    throw Error("upload to " + t.name() + ": " + std::to_string(bytes) + " bytes given, tensor holds " +
                std::to_string(t.bytes()));
  upload(t, 0, data, bytes);
}

void Context::download(const Tensor& t, void* data, size_t bytes) {
  if (bytes != t.bytes())
    throw Error("download from " + t.name() + ": " + std::to_string(bytes) + " bytes requested, tensor holds " +
                std::to_string(t.bytes()));
  download(t, 0, data, bytes);
}

void Context::upload(const Tensor& t, size_t offset, const void* data, size_t bytes) {
  if (offset + bytes > t.buffer().size()) throw Error("upload past the end of " + t.name());
  if (bytes == 0) return;
  if (t.mapped()) {
    std::memcpy(static_cast<uint8_t*>(t.mapped()) + offset, data, bytes);
    return;
  }
  Tensor staging =
      tensor(DType::U32, {static_cast<int64_t>((bytes + 3) / 4)}, "staging for " + t.name(), MemoryUsage::Upload);
  std::memcpy(staging.mapped(), data, bytes);
  CommandStream s(*this);
  TensorView src = staging.view(), dst = t.view();
  src.bytes = bytes;
  dst.offset += offset;
  dst.bytes = bytes;
  s.copy(src, dst);
  s.submit_and_wait();
}

void Context::download(const Tensor& t, size_t offset, void* data, size_t bytes) {
  if (offset + bytes > t.buffer().size()) throw Error("download past the end of " + t.name());
  if (bytes == 0) return;
  if (t.mapped()) {
    std::memcpy(data, static_cast<const uint8_t*>(t.mapped()) + offset, bytes);
    return;
  }
  Tensor staging =
      tensor(DType::U32, {static_cast<int64_t>((bytes + 3) / 4)}, "readback for " + t.name(), MemoryUsage::Readback);
  CommandStream s(*this);
  TensorView src = t.view(), dst = staging.view();
  src.offset += offset;
  src.bytes = bytes;
  dst.bytes = bytes;
  s.copy(src, dst);
  s.submit_and_wait();
  std::memcpy(data, staging.mapped(), bytes);
}

uint32_t Context::default_workgroup_size() const {
  // A multiple of the largest subgroup the device may run, so kernels that give each subgroup a
  // row (rms_norm) never see a partial subgroup, whatever size a pipeline gets.
  const uint32_t sg = std::max({caps_.subgroup_size, caps_.max_subgroup_size, 1u});
  uint32_t wg = 256;
  if (wg % sg) wg = sg * ((wg + sg - 1) / sg);
  return std::min(wg, caps_.max_workgroup_invocations);
}

}  // namespace vkspec
