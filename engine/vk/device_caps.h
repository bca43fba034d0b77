#pragma once
// What a Vulkan device can do, read once at start-up. Kernel variants are chosen from this record,
// never from hard-coded vendor assumptions.
#include <cstdint>
#include <string>
#include <vector>

#include <volk.h>

namespace vkspec {

struct MemoryHeapInfo {
  uint64_t size = 0;
  bool device_local = false;
};

struct DeviceCaps {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices
  std::string name;
  std::string vendor;  // "NVIDIA", "AMD", "Intel", "Mesa (llvmpipe)", ...
  uint32_t vendor_id = 0, device_id = 0;
  std::string device_type;  // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver_name, driver_info;
  uint32_t api_version = 0;
  uint8_t device_uuid[16] = {};

  // Subgroups.
  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;  // equal when size control is absent
  bool subgroup_size_control = false;
  bool subgroup_basic = false, subgroup_vote = false, subgroup_arithmetic = false, subgroup_ballot = false,
       subgroup_shuffle = false, subgroup_shuffle_relative = false, subgroup_clustered = false, subgroup_quad = false;
  bool subgroup_in_compute = false;

  // Arithmetic and storage types.
  bool shader_float16 = false, shader_int8 = false, shader_int64 = false;
  bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  bool integer_dot_product = false;
  // NV, KHR: the extension, its cooperativeMatrix feature and the Vulkan memory model (glslang
  // emits it for cooperative-matrix shaders), so the engine can turn them on.
  bool cooperative_matrix_nv = false, cooperative_matrix_khr = false;
  bool push_descriptor = false;

  // Limits.
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {};
  uint32_t max_workgroup_count[3] = {};
  uint64_t max_storage_buffer_range = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t max_texel_buffer_elements = 0;  // uniform texel buffers (weights, see TexelView)
  uint64_t min_texel_buffer_offset_alignment = 0;
  uint32_t max_push_constants_size = 0;
  std::vector<MemoryHeapInfo> heaps;

  // Timing.
  bool timestamps = false;  // compute queue supports timestamp queries
  float timestamp_period_ns = 0;
  uint32_t timestamp_valid_bits = 0;

  // What kernels choose their variants from, derived once here from the facts above and probes,
  // so that no op re-derives (or caches) a device quirk of its own.
  // matmul_coopmat.comp can run: NV or KHR cooperative matrix, fp16 arithmetic, and 16x16x16
  // f16 x f16 -> f32 subgroup fragments among that extension's shapes (neither promises that size).
  bool coopmat_f16_16x16x16 = false;
  // KHR has those fragments; and whether the kernel goes through KHR (engine/vk/coopmat_khr.h):
  // where NV lacks them, or where ContextOptions::coopmat_khr asks. NV keeps the devices that have
  // both because NV is the path that has run on a GPU; KHR has run on none yet (issue 33).
  bool coopmat_khr_f16_16x16x16 = false, coopmat_khr = false;
  // Subgroup reductions (subgroupAdd, subgroupMax, ...) in compute shaders.
  bool subgroup_reduce = false;
  // A kernel can read another lane's value at a lane it knows at pipeline creation: shuffle and
  // ballot operations in compute shaders and one subgroup size for every pipeline. The CPU
  // kernels read lanes with subgroupShuffle, not subgroupBroadcast: llvmpipe builds a broadcast
  // as a loop over the lanes looking for an active one (about 45 instructions a read), a shuffle
  // to a constant lane as one vector permute (docs/perf.md, "Lane reads on lavapipe").
  bool subgroup_lane_reads = false;
  // A CPU implementation (lavapipe): each workgroup runs on one thread with its subgroups taking
  // turns at every barrier, and loads cost per lane and component; kernels then take one subgroup
  // per workgroup, lane-broadcast variants and about two workgroups per CPU thread. Read only to
  // choose kernel variants: Context clears it under VKSPEC_GPU_KERNELS (device_type still says cpu).
  bool cpu_driver = false;

  uint64_t device_local_bytes() const;
  std::string to_text() const;
  std::string to_json() const;  // one JSON object
};

// Reads every field above from the physical device.
DeviceCaps query_device_caps(VkPhysicalDevice pd, uint32_t index);

// Clears the optional features named in a comma-separated list (push-descriptor, int64, int8,
// float16, 16bit-storage, 8bit-storage, subgroup-size-control, cooperative-matrix) and what is
// derived from them, so a device runs the paths a device without them takes;
// small-offset-alignment raises minStorageBufferOffsetAlignment to 256 (SwiftShader's). Throws
// Error on an unknown name.
void mask_device_features(DeviceCaps& caps, const std::string& list);

// Preference order for automatic choice: discrete > integrated > virtual > cpu.
int device_type_rank(const std::string& device_type);

}  // namespace vkspec
