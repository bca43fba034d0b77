#pragma once
// A compute pipeline built from embedded SPIR-V. Its layout (buffer bindings and whether
// each is read or written, push-constant size, specialization constants, workgroup size) comes
// from SPIRV-Cross reflection of the SPIR-V, so no shader interface is written out twice.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <volk.h>

#include "engine/vk/shader_registry.h"

namespace vkspec {

struct PipelineBinding {
  uint32_t binding = 0;
  bool reads = true;   // false when declared writeonly
  bool writes = true;  // false when declared readonly
  // A uniform texel buffer (GLSL utextureBuffer, R32G32B32A32_UINT): bound to the TensorView's
  // TexelView, the whole block; the shader adds the view's offset / 16 itself.
  bool texels = false;
};

// Values for specialization constants by constant_id: spec[i] sets constant_id i. Constants with
// no value keep the default in the shader.
using SpecConstants = std::vector<uint32_t>;

struct ShaderReflection {
  std::vector<PipelineBinding> bindings;  // sorted by binding, dense from 0
  uint32_t push_constant_size = 0;
  std::vector<uint32_t> spec_ids;                // constant_ids the shader declares
  std::vector<uint32_t> spec_defaults;           // their default values, same order
  uint32_t local_size[3] = {1, 1, 1};            // literal sizes
  int32_t local_size_spec_id[3] = {-1, -1, -1};  // constant_id when set by local_size_*_id
  bool subgroup_ops = false;                     // declares a GroupNonUniform* capability
};

// Throws Error naming the shader when it uses anything but storage buffers and uniform texel
// buffers in set 0 and push constants.
ShaderReflection reflect_shader(const std::string& name, const uint32_t* words, size_t word_count);

class Pipeline {
 public:
  // full_subgroup_size: the device's subgroupSize where computeFullSubgroups is enabled, else 0.
  // A shader with subgroup operations whose workgroup width is a multiple of it is then built
  // with VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT. Without the flag a driver may
  // launch a subgroup with inactive lanes while gl_SubgroupSize (SPIR-V 1.5, no varying-size
  // flag) still reads subgroupSize; with it every subgroup has exactly subgroupSize live lanes,
  // which the kernels that stride or broadcast by lane rely on.
  // push_descriptors: the set layout is a push-descriptor layout (VK_KHR_push_descriptor);
  // otherwise descriptor sets are allocated from it (DescriptorArena).
  // coopmat_khr: a shader written for NV cooperative matrix is built through KHR
  // (coopmat_nv_to_khr, engine/vk/coopmat_khr.h).
  Pipeline(VkDevice device, VkPipelineCache cache, ShaderId shader, const SpecConstants& spec,
           uint32_t full_subgroup_size, bool push_descriptors, bool coopmat_khr = false);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const std::string& name() const { return name_; }
  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  const std::vector<PipelineBinding>& bindings() const { return reflection_.bindings; }
  uint32_t push_constant_size() const { return reflection_.push_constant_size; }
  // Workgroup size after specialization.
  uint32_t local_size(int axis) const { return local_size_[axis]; }
  // Built with REQUIRE_FULL_SUBGROUPS (see the constructor).
  bool full_subgroups() const { return full_subgroups_; }
  // True the first time it is asked (per pipeline, whichever thread asks): a CPU driver compiles
  // the pipeline's code when a dispatch first runs it, so the batch holding that dispatch is
  // allowed longer before its fence counts as hung (CommandStream::wait).
  bool take_first_use() const { return !used_.exchange(true, std::memory_order_relaxed); }

 private:
  void create(const uint32_t* words, size_t word_count, VkPipelineCache cache,
              const std::vector<VkSpecializationMapEntry>& entries, const std::vector<uint32_t>& values,
              bool full_subgroups, bool push_descriptors);
  void destroy();

  VkDevice device_;
  std::string name_;
  ShaderReflection reflection_;
  uint32_t local_size_[3] = {1, 1, 1};
  bool full_subgroups_ = false;
  mutable std::atomic<bool> used_{false};
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace vkspec
